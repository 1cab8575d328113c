// receipt_missing (SPEC §3): the record is terminal for longer than
// receipt_grace with no terminal receipt, judged only where receipts were
// being read at that time (a missing topic or a lagging consumer is not a
// missing receipt).
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeReceiptMissing(const CallFacts& call) {
    Verdict v;
    if (!call.sources.receipts || !call.recordTerminal() || call.terminalReceipts != 0 ||
        call.updatedAt == kNoTime)
        return v;
    const EpochMillis due = call.updatedAt + call.thresholds.receiptGrace.count();
    const Coverage& read = call.coverage;
    const bool readFromBefore = read.kafkaFrom != kNoTime && read.kafkaFrom <= call.updatedAt;
    if (call.now <= due) {
        v.wake(due + 1);
        return v;
    }
    if (!readFromBefore || read.kafkaTo < due) {
        if (readFromBefore)
            v.wake(call.now + 1000); // receipts are being read but not yet up to `due`
        return v;
    }
    Finding f = call.single(AnomalyKind::ReceiptMissing, Severity::Warning);
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Record || e.type == EventType::Receipt)
            f.evidence.push_back(call.evidence(e));
    if (!call.firstSource.empty())
        f.instances.push_back(call.firstSource);
    call.addOwnDigest(f);
    f.since = call.updatedAt;
    f.summary = "record " + std::string(toString(call.state.recordStatus())) +
                ", no terminal receipt within " + formatDuration(call.thresholds.receiptGrace);
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
