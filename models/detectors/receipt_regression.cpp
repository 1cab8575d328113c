// receipt_regression (SPEC §3): a caller moves from a terminal state back to
// a non-terminal one (caller events in arrival order), or two receipts share
// a version with different statuses.
#include "models/detectors/detector.h"

namespace callscope {

Verdict judgeReceiptRegression(const CallFacts& call) {
    Verdict v;
    // Looked for first: most calls have neither, and their finding is not
    // built (every call of a window load is judged).
    const CallEvent* terminal = nullptr; // the caller's first terminal state
    const CallEvent* back = nullptr;     // a later non-terminal one
    for (const CallEvent& e : call.events) {
        if (e.type != EventType::Caller)
            continue;
        if (terminal && !isCallerTerminal(e.code)) {
            back = &e;
            break;
        }
        if (isCallerTerminal(e.code) && !terminal)
            terminal = &e;
    }
    if (!back && !call.clashingVersion)
        return v;
    Finding f = call.single(AnomalyKind::ReceiptRegression, Severity::Warning);
    if (back) {
        f.evidence.push_back(call.evidence(*terminal));
        f.evidence.push_back(call.evidence(*back));
        f.instances.push_back(call.instance(*back));
        f.summary = "caller moved from " +
                    std::string(toString(static_cast<CallerState>(terminal->code))) + " back to " +
                    std::string(toString(static_cast<CallerState>(back->code)));
    }
    if (call.clashingVersion) {
        for (const CallEvent& e : call.events)
            if (e.type == EventType::Receipt && e.aux == *call.clashingVersion)
                f.evidence.push_back(call.evidence(e));
        if (f.summary.empty())
            f.summary = "receipt version " + std::to_string(*call.clashingVersion) +
                        " delivered with different statuses";
    }
    if (f.evidence.empty())
        return v;
    call.addOwnDigest(f);
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
