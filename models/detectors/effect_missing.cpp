// effect_missing (SPEC §3): the record is SUCCESS but the deployment's
// business-effect probe ([probe]) found no business row `delay` after it: the
// idempotency record and the business write were not one transaction, and
// every retry is now answered "success" for an action that left nothing.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeEffectMissing(const CallFacts& call) {
    Verdict v;
    if (!call.sources.probe || !(call.state.flags & EffectMissing) ||
        !call.recordIs(RecordStatus::Success))
        return v;
    Finding f = call.single(AnomalyKind::EffectMissing, Severity::Critical);
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Record &&
            static_cast<RecordStatus>(e.code) == RecordStatus::Success)
            f.evidence.push_back(call.evidence(e));
    call.addOwnDigest(f);
    if (const std::string biz = call.store.bizNo(call.state.bizNo); !biz.empty())
        f.summary = "record SUCCESS, but the business-effect probe found no row for bizNo " + biz +
                    ": the record and the business write were not one transaction";
    else
        f.summary = "record SUCCESS, but the business-effect probe found no row for the callId: "
                    "the record and the business write were not one transaction";
    f.cause = std::string(toString(Cause::EffectMissing));
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
