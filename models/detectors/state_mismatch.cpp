// state_mismatch (SPEC §3): terminal statuses disagree between the record,
// the receipts and the caller's confirmation.
#include "models/detectors/detector.h"

#include <map>

namespace callscope {

Verdict judgeStateMismatch(const CallFacts& call) {
    Verdict v;
    unsigned views = call.terminalReceipts; // a bit per terminal status, any source
    if (call.recordTerminal())
        views |= 1u << static_cast<unsigned>(call.state.recordStatus());
    for (const CallEvent& e : call.events)
        if (e.type == EventType::Caller && isCallerTerminal(e.code))
            views |= 1u << static_cast<unsigned>(confirmedStatus(e.code));
    if (__builtin_popcount(views) < 2)
        return v;
    std::map<std::uint8_t, std::vector<const CallEvent*>> byStatus;
    const CallEvent* latestRecord = nullptr;
    for (const CallEvent& e : call.events) {
        if (e.type == EventType::Record)
            latestRecord = &e;
        else if (e.type == EventType::Receipt && isTerminal(static_cast<RecordStatus>(e.code)))
            byStatus[e.code].push_back(&e);
        else if (e.type == EventType::Caller && isCallerTerminal(e.code))
            byStatus[static_cast<std::uint8_t>(confirmedStatus(e.code))].push_back(&e);
    }
    if (latestRecord && call.recordTerminal())
        byStatus[static_cast<std::uint8_t>(call.state.recordStatus())].push_back(latestRecord);
    if (byStatus.size() < 2)
        return v;
    Finding f = call.single(AnomalyKind::StateMismatch, Severity::Critical);
    std::string list;
    for (const auto& [status, events] : byStatus) {
        std::string who;
        for (const CallEvent* e : events) {
            f.evidence.push_back(call.evidence(*e));
            if (e->type == EventType::Caller)
                f.instances.push_back(call.instance(*e));
            const char* name = e->type == EventType::Record    ? "record"
                               : e->type == EventType::Receipt ? "receipt"
                                                               : "caller";
            if (who.find(name) == std::string::npos)
                who += (who.empty() ? "" : "+") + std::string(name);
        }
        list += (list.empty() ? "" : "; ") + who + " " +
                std::string(toString(static_cast<RecordStatus>(status)));
    }
    call.addOwnDigest(f);
    f.summary = "terminal states disagree: " + list;
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
