// concurrent_execution (SPEC §3): two or more EXECUTED/REOCCUPIED attempts of
// one callId overlapping in time where the first was not stale: the atomic
// placeholder failed.
#include "models/detectors/detector.h"

#include <algorithm>

namespace callscope {

Verdict judgeConcurrentExecution(const CallFacts& call) {
    Verdict v;
    std::vector<const CallEvent*> runs;
    for (const CallEvent& e : call.events)
        if (executes(e))
            runs.push_back(&e);
    if (!call.sources.attempts || !call.sources.records || runs.size() < 2)
        return v;
    std::sort(runs.begin(), runs.end(),
              [](const CallEvent* a, const CallEvent* b) { return a->dt < b->dt; });
    std::vector<const CallEvent*> overlapping;
    const CallEvent* running = nullptr; // the latest execution before this one
    for (const CallEvent* e : runs) {
        // A REOCCUPIED run took over a PROCESSING the server judged stale:
        // that is the protocol working, not a broken placeholder.
        const bool stillRunning = running && (running->aux == kNoDt || e->dt < running->aux);
        if (stillRunning && e->code == static_cast<std::uint8_t>(AttemptOutcome::Executed)) {
            if (overlapping.empty() || overlapping.back() != running)
                overlapping.push_back(running);
            overlapping.push_back(e);
        }
        running = e;
    }
    if (overlapping.empty())
        return v;
    Finding f = call.single(AnomalyKind::ConcurrentExecution, Severity::Critical);
    for (const CallEvent* e : overlapping) {
        f.evidence.push_back(call.evidence(*e));
        f.instances.push_back(call.instance(*e));
    }
    call.addOwnDigest(f);
    f.summary = std::to_string(overlapping.size()) +
                " executions of one callId overlapped: the atomic placeholder failed";
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
