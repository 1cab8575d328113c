// key_rotation (SPEC §3): one request digest (or one bizNo) under two or more
// callIds within key_rotation_window: the "new key on timeout" retry, or a
// callId made again for the same request with no timeout (context lost in an
// async branch). Critical when two or more of the callIds executed. The
// engine finds the group (DetectionEngine::siblings); this names and
// describes it, and tells the two stories apart by the caller's timeouts.
#include "models/detectors/detector.h"

#include <algorithm>

namespace callscope {

std::uint32_t keyRotationSubject(const CallStore& s, const std::vector<std::uint32_t>& members) {
    // The group is named after its earliest callId, whichever member is judged.
    std::uint32_t earliest = members.front();
    for (const std::uint32_t m : members) {
        const EpochMillis at = firstEventAt(s, m), earliestAt = firstEventAt(s, earliest);
        if (at < earliestAt || (at == earliestAt && s.callId(m) < s.callId(earliest)))
            earliest = m;
    }
    return earliest;
}

Cause keyRotationCause(const CallStore& s, const std::vector<std::uint32_t>& members) {
    std::vector<std::pair<EpochMillis, std::uint32_t>> byFirst;
    bool callerEvents = false;
    for (const std::uint32_t m : members) {
        byFirst.emplace_back(firstEventAt(s, m), m);
        for (const CallEvent& e : s.events(m))
            callerEvents |= e.type == EventType::Caller;
    }
    if (!callerEvents)
        return Cause::Unknown;
    std::sort(byFirst.begin(), byFirst.end());
    // The earliest caller timeout among the members that came before each one;
    // an earlier member whose caller events were not read cannot tell.
    EpochMillis firstTimeout = kNoTime;
    bool earlierSeen = true;
    for (std::size_t k = 0; k < byFirst.size(); ++k) {
        const auto [at, m] = byFirst[k];
        if (k > 0 && (firstTimeout == kNoTime || firstTimeout > at))
            return earlierSeen ? Cause::CallIdRegenerated : Cause::Unknown;
        const auto ev = s.events(m);
        earlierSeen &= std::any_of(ev.begin(), ev.end(),
                                   [](const CallEvent& e) { return e.type == EventType::Caller; });
        for (const CallEvent& e : s.events(m))
            if (e.type == EventType::Caller &&
                static_cast<CallerState>(e.code) == CallerState::TimeoutUnknown) {
                const EpochMillis t = s.timeOf(s.call(m), e.dt);
                if (firstTimeout == kNoTime || t < firstTimeout)
                    firstTimeout = t;
            }
    }
    return Cause::KeyRotatedAfterTimeout;
}

Finding judgeKeyRotation(const CallStore& s, const std::vector<std::uint32_t>& members,
                         std::uint32_t self, const DetectionSources& sources) {
    const auto evidence = [&](std::uint32_t call, const CallEvent& e) {
        return Evidence{s.callId(call), s.timeOf(s.call(call), e.dt), describeEvent(s, call, e)};
    };
    Finding f;
    f.kind = AnomalyKind::KeyRotation;
    f.subject = s.callId(keyRotationSubject(s, members));
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
            if (executes(e) || (e.type == EventType::Caller &&
                                static_cast<CallerState>(e.code) == CallerState::TimeoutUnknown))
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
    const Cause cause = keyRotationCause(s, members);
    f.cause = std::string(toString(cause));
    const char* story = cause == Cause::KeyRotatedAfterTimeout
                            ? ": a timed-out call retried with a new key"
                        : cause == Cause::CallIdRegenerated
                            ? ": the same request under a new callId with no timeout before it "
                              "(the callId was made again, e.g. context lost in an async branch)"
                            : ": the same request under a new callId (no caller events tell "
                              "whether the first timed out)";
    f.summary = (sameDigest ? "digest " + shortDigest(s.digest(tie.digest))
                            : "bizNo " + s.bizNo(tie.bizNo)) +
                " under " + std::to_string(members.size()) + " callIds, executed under " +
                std::to_string(executed) + story;
    return f;
}

} // namespace callscope
