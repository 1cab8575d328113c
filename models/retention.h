#pragma once
#include <functional>
// SPEC §2 retention and the memory budget, over the store and the engine:
// which calls leave memory, in which order, and which anomalies are forgotten.
#include "models/detection_engine.h"

namespace callscope {

struct RetentionPolicy {
    Millis finishedCalls{30 * 60'000}; // healthy finished calls leave after this
    std::int64_t maxCalls = 5'000'000;
    std::int64_t maxBytes = std::int64_t{1} << 30; // calls and anomalies together
    bool recordsRead = true;  // a call is finished by its record; else (Kafka only)...
    bool receiptsRead = true; // ...by a terminal receipt, or by its caller when none are read
    // Live: a healthy finished call leaves whole memory once it is final,
    // packed (releaseFinal), not by age here: the record feed reads the last
    // clock_skew again, and a row of a call gone would make it anew, its
    // receipt missing.
    bool packsFinal = false;
};

struct RetentionResult {
    std::size_t left = 0;                // calls that left memory
    std::int64_t overBudget = 0;         // of them, pushed out by max_calls or the budget
    std::int64_t anomaliesForgotten = 0; // the oldest anomalies, over the budget
};

// Evicts healthy finished calls past `finishedCalls` (not `packsFinal`),
// then over `maxCalls` or the memory budget (with 20 % headroom) packed
// calls, oldest first, and the oldest calls tier by tier: finished calls no
// anomaly names (`packsFinal`, over the budget: packed, still tracked), then
// calls whose anomalies are all resolved, then unfinished calls no anomaly
// names; still over it, the oldest anomalies are forgotten with their calls. Anomalies resolved
// longer ago than finishedCalls (or `keepResolved`, the dashboard's window) are forgotten first.
// The store is compacted and the engine remapped.
RetentionResult applyRetention(CallStore& store, DetectionEngine& engine,
                               const RetentionPolicy& policy, EpochMillis now,
                               Millis keepResolved = Millis{0});

// While a window loads (issue 12, a streaming scan): every source has read
// all data stamped before `readTo`. A finished call (as for retention, its
// caller done too when seen) whose events all lie before readTo - grace is
// final: nothing still to come can change its verdict. Once at least
// `minFinal` calls are final (so that the store is compacted rarely), they
// are judged as the end of the load would judge them, and those no anomaly
// names leave memory: for good when their first event lies before readTo -
// keyRotationWindow (nothing to come can share their key), else frozen when
// the store freezes (CallStore::freeze: a call of the same key brings them
// back), else they stay. Returns how many left that had not left before
// (onLeave is told of those only).
// `byLastEvent` (live, where the window is retention's): a call leaves for
// good, or its packed block goes, once its last event (not its first) lies
// before readTo - keyRotationWindow, so that a long call is kept as long
// after its last event as retention keeps any.
struct FinalLine {
    EpochMillis readTo = kNoTime;
    Millis grace{0};
    Millis keyRotationWindow{0};
    bool byLastEvent = false;
};
struct ReleaseResult {
    std::size_t left = 0;
    std::size_t withRecord = 0; // of them, calls whose record was read
};
ReleaseResult releaseFinal(CallStore& store, DetectionEngine& engine, const RetentionPolicy& policy,
                           const FinalLine& line, EpochMillis now, std::size_t minFinal,
                           const std::function<void(std::uint32_t)>& leaving = {});

} // namespace callscope
