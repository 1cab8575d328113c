// stuck_processing (SPEC §3): the record is PROCESSING and now - updated_at >
// stuck_after; critical past four times that.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeStuckProcessing(const CallFacts& call) {
    Verdict v;
    if (!call.recordIs(RecordStatus::Processing) || call.updatedAt == kNoTime)
        return v;
    const EpochMillis age = call.now - call.updatedAt;
    const std::int64_t after = call.thresholds.stuckAfter.count();
    if (age <= after) {
        v.wake(call.updatedAt + after + 1);
        return v;
    }
    // Judged on a read of the table made after the threshold passed: a source
    // that lags (or is down) cannot show the record finishing.
    const EpochMillis readTo = call.coverage.recordsReadTo;
    if (readTo != kNoTime && readTo <= call.updatedAt + after) {
        v.wake(call.now + 1000);
        v.keep = call.kept(AnomalyKind::StuckProcessing); // open: kept until the tables are read
        return v;
    }
    Finding f = call.single(AnomalyKind::StuckProcessing,
                            age > 4 * after ? Severity::Critical : Severity::Warning);
    f.since = call.updatedAt;
    f.summary = "record PROCESSING (stuck after " + formatDuration(call.thresholds.stuckAfter) +
                "), lock_version " + std::to_string(call.state.lockVersion);
    if (!call.firstSource.empty())
        f.instances.push_back(call.firstSource);
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Record || (e.type == EventType::Attempt && executes(e))) {
            f.evidence.push_back(call.evidence(e));
            if (e.type == EventType::Attempt)
                f.instances.push_back(call.instance(e));
        }
    if (!call.store.digest(call.state.digest).empty())
        f.digests.push_back(call.store.digest(call.state.digest));
    if (age <= 4 * after)
        v.wake(call.updatedAt + 4 * after + 1);
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
