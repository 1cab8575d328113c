// expired_replay (SPEC §3): a request or caller retry after the record's
// expire_at, or a record made again for a callId seen before: the idempotency
// window is too short. Critical when it executed again.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeExpiredReplay(const CallFacts& call) {
    Verdict v;
    if (!call.state.hasRecord())
        return v;
    const EpochMillis expireAt = call.store.expireAt(call.state);
    const EpochMillis createdAt = call.timeOf(call.state.created);
    const bool recreated = (call.state.flags & RecordRecreated) != 0;
    std::vector<const CallEvent*> late;
    bool executedAgain = recreated;
    for (const CallEvent& e : call.events) {
        const EpochMillis t = call.timeOf(e.dt);
        if (e.type == EventType::Attempt && expireAt != kNoTime && t > expireAt) {
            late.push_back(&e);
            executedAgain |= executes(e);
        } else if (e.type == EventType::Caller && expireAt != kNoTime && t > expireAt &&
                   static_cast<CallerState>(e.code) == CallerState::AwaitingResponse && e.aux > 1) {
            late.push_back(&e);
        } else if (executes(e) && createdAt != kNoTime) {
            // An execution that ended before this record existed belongs to an
            // earlier incarnation (server clocks only; caller clocks differ).
            const EpochMillis end = e.aux != kNoDt ? call.timeOf(e.aux) : t + 1000;
            if (end < createdAt) {
                late.push_back(&e);
                executedAgain = true;
            }
        }
    }
    if (late.empty() && !recreated)
        return v;
    Finding f = call.single(AnomalyKind::ExpiredReplay,
                            executedAgain ? Severity::Critical : Severity::Warning);
    for (const CallEvent* e : late) {
        f.evidence.push_back(call.evidence(*e));
        if (e->type != EventType::Record)
            f.instances.push_back(call.instance(*e));
    }
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Record) {
            // Its window as a length (times are the surfaces' to show, in
            // their zone): created when, relative to this write.
            Evidence x = call.evidence(e);
            if (expireAt != kNoTime)
                x.what += ", window " + formatDuration(Millis{expireAt - createdAt});
            if (x.at > createdAt)
                x.what += ", created " + formatDuration(Millis{x.at - createdAt}) + " before";
            f.evidence.push_back(std::move(x));
            break;
        }
    call.addOwnDigest(f);
    f.summary = executedAgain
                    ? "executed again after the idempotency record expired (window too short)"
                    : "retried after the idempotency record expired (window too short)";
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
