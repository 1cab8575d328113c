// orphan_receipt (SPEC §3): a receipt for a callId with no record, after
// receipt_grace for the record to be read (at once in batch mode, where
// everything there is has been loaded). Off when the record is not read.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeOrphanReceipt(const CallFacts& call) {
    Verdict v;
    if (!call.sources.records || call.state.hasRecord() || call.firstReceiptAt == kNoTime)
        return v;
    const EpochMillis due = call.firstReceiptAt + call.thresholds.receiptGrace.count();
    if (!call.coverage.settled && call.now <= due) {
        v.wake(due + 1);
        return v;
    }
    Finding f = call.single(AnomalyKind::OrphanReceipt, Severity::Info);
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Receipt) {
            f.evidence.push_back(call.evidence(e));
            if (const std::uint32_t d = call.store.eventDigest(call.call, e))
                f.digests.push_back(call.store.digest(d));
        }
    f.summary = "receipt for a callId with no idempotency record";
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
