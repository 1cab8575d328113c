// caller_stuck (SPEC §3): the caller is in TIMEOUT_UNKNOWN / AWAITING_RECEIPT
// longer than caller_alert_after with no confirmation or escalation, judged
// only once the caller topics are read past that time.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeCallerStuck(const CallFacts& call) {
    Verdict v;
    if (!call.sources.callerEvents)
        return v;
    bool settledByCaller = false;
    const CallEvent* waitingSince = nullptr;
    for (const CallEvent& e : call.events) {
        if (e.type != EventType::Caller)
            continue;
        if (isCallerTerminal(e.code) || static_cast<CallerState>(e.code) == CallerState::Escalated)
            settledByCaller = true;
        if (!isCallerWaiting(e.code))
            waitingSince = nullptr;
        else if (!waitingSince)
            waitingSince = &e;
    }
    if (settledByCaller || !waitingSince)
        return v;
    const EpochMillis since = call.timeOf(waitingSince->dt);
    const EpochMillis due = since + call.thresholds.callerAlertAfter.count();
    if (call.now <= due) {
        v.wake(due + 1);
        return v;
    }
    // The caller's confirmation may be in messages not read yet.
    const Coverage& read = call.coverage;
    if (!read.settled && read.kafkaTo != kNoTime && read.kafkaTo <= due) {
        v.wake(call.now + 1000);
        v.keep = call.kept(AnomalyKind::CallerStuck); // open: kept until the topics are read
        return v;
    }
    Finding f = call.single(AnomalyKind::CallerStuck, Severity::Warning);
    const std::string inst = call.instance(*waitingSince);
    f.instances.push_back(inst);
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Caller)
            f.evidence.push_back(call.evidence(e));
    call.addOwnDigest(f);
    f.since = since;
    f.summary = "caller " + inst + " waiting (" +
                std::string(toString(static_cast<CallerState>(call.state.caller - 1))) +
                "), no confirmation or escalation after " +
                formatDuration(call.thresholds.callerAlertAfter);
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
