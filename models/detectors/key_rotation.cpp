// key_rotation (SPEC §3): one request digest (or one bizNo) under two or more
// callIds within key_rotation_window: the "new key on timeout" retry.
// Critical when two or more of the callIds executed. The engine finds the
// group (DetectionEngine::siblings); this names and describes it.
#include "models/detectors/detector.h"

namespace callscope {

Finding judgeKeyRotation(const CallStore& s, const std::vector<std::uint32_t>& members,
                         std::uint32_t self, const DetectionSources& sources) {
    const auto evidence = [&](std::uint32_t call, const CallEvent& e) {
        return Evidence{s.callId(call), s.timeOf(s.call(call), e.dt), describeEvent(s, call, e)};
    };
    // The group is named after its earliest callId, whichever member is judged.
    std::uint32_t earliest = members.front();
    for (const std::uint32_t m : members) {
        const EpochMillis at = firstEventAt(s, m), earliestAt = firstEventAt(s, earliest);
        if (at < earliestAt || (at == earliestAt && s.callId(m) < s.callId(earliest)))
            earliest = m;
    }
    Finding f;
    f.kind = AnomalyKind::KeyRotation;
    f.subject = s.callId(earliest);
    int executed = 0;
    for (const std::uint32_t m : members) {
        f.callIds.push_back(s.callId(m));
        bool ran = s.call(m).hasRecord();
        const CallEvent* first = nullptr;
        for (const CallEvent& e : s.events(m)) {
            ran |= executes(e);
            // Without the record, a terminal receipt is the proof the server ran it.
            ran |= !sources.records && e.type == EventType::Receipt &&
                   isTerminal(static_cast<RecordStatus>(e.code));
            if (!first || e.dt < first->dt)
                first = &e;
            if (e.type == EventType::Caller || e.type == EventType::Attempt)
                f.instances.push_back(s.instance(e.instance));
            if (executes(e))
                f.evidence.push_back(evidence(m, e));
        }
        if (first && !executes(*first))
            f.evidence.push_back(evidence(m, *first));
        executed += ran;
    }
    const CallState& tie = s.call(self);
    const bool sameDigest = tie.digest != 0 && s.callsWithDigest(tie.digest).size() >= 2;
    if (tie.digest)
        f.digests.push_back(s.digest(tie.digest));
    f.severity = executed >= 2 ? Severity::Critical : Severity::Warning;
    f.summary = (sameDigest ? "digest " + shortDigest(s.digest(tie.digest))
                            : "bizNo " + s.bizNo(tie.bizNo)) +
                " under " + std::to_string(members.size()) + " callIds, executed under " +
                std::to_string(executed) + ": a timed-out call retried with a new key";
    return f;
}

} // namespace callscope
