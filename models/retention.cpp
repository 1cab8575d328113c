#include "models/retention.h"

#include "models/detectors/detector.h"

#include <algorithm>
#include <array>
#include <set>
#include <unordered_set>

namespace callscope {

namespace {

// What a call packed takes, its keys' index included (FrozenCalls: about
// 100 bytes; a little more to be safe).
constexpr double kPackedCallBytes = 120;

bool callerDone(const CallState& c) {
    return c.caller != 0 && (isTerminal(static_cast<CallerState>(c.caller - 1)) ||
                             static_cast<CallerState>(c.caller - 1) == CallerState::Escalated);
}

// Finished: the record is terminal; without the record (Kafka only), a
// terminal receipt came or the caller confirmed or escalated.
bool finishedCall(const CallStore& store, std::uint32_t i, const RetentionPolicy& policy) {
    const CallState& c = store.call(i);
    // A business-effect probe is still due: its answer may make it an anomaly.
    if ((c.flags & ProbeScheduled) && !(c.flags & EffectProbed))
        return false;
    if (policy.recordsRead)
        return c.hasRecord() && isTerminal(c.recordStatus());
    if (callerDone(c))
        return true;
    if (policy.receiptsRead)
        for (const CallEvent& e : store.events(i))
            if (e.type == EventType::Receipt && isTerminal(static_cast<RecordStatus>(e.code)))
                return true;
    return false;
}

// Another call in the store has its digest or bizNo: its group is judged
// with it there, so it stays (a frozen call comes back only when a new call
// takes its key, not when one already here is judged again).
bool sharesKey(const CallStore& store, const CallState& c) {
    return (c.digest && store.digestShared(c.digest)) || (c.bizNo && store.bizNoShared(c.bizNo));
}

} // namespace

RetentionResult applyRetention(CallStore& store, DetectionEngine& engine,
                               const RetentionPolicy& policy, EpochMillis now,
                               Millis keepResolved) {
    RetentionResult result;
    const std::int64_t keepMs = policy.finishedCalls.count();
    // Anomalies resolved longer ago than finished calls are kept (or than the
    // dashboard's window) are forgotten; their calls may then leave memory too.
    engine.forgetResolved(store, now - std::max(keepMs, keepResolved.count()));
    const auto finished = [&](std::uint32_t i) { return finishedCall(store, i, policy); };
    // Healthy finished: no anomaly names it, and the caller (if it is seen)
    // is done too.
    const auto healthyFinished = [&](std::uint32_t i) {
        const CallState& c = store.call(i);
        if (policy.packsFinal || engine.holds(i) || !finished(i))
            return false;
        return (c.caller == 0 || callerDone(c)) && store.lastEventAt(i) < now - keepMs;
    };
    std::size_t evict = 0;
    for (std::uint32_t i = 0; i < store.size(); ++i)
        evict += healthyFinished(i);
    // Over max_calls or over the memory budget ([store] max_bytes, which
    // covers the calls and the anomalies), calls go oldest first, tier by tier,
    // until both hold (the budget with 20 % headroom): frozen calls (live:
    // final and healthy, packed), finished calls no anomaly names, then calls
    // whose anomalies are all resolved, then unfinished calls no anomaly names.
    const auto budget = static_cast<double>(policy.maxBytes);
    const auto anomalyBytes = static_cast<double>(engine.memoryBytes());
    const auto maxCalls = static_cast<std::size_t>(std::max<std::int64_t>(policy.maxCalls, 0));
    // The oldest packed calls go until the calls fit max_calls and, over the
    // budget, the budget with 20 % headroom beside the calls held whole.
    const auto dropPacked = [&](RetentionResult& r) {
        if (store.frozenCount() == 0)
            return;
        const auto hot = static_cast<double>(store.memoryBytes() - store.frozenBytes());
        const auto anomalies = static_cast<double>(engine.memoryBytes());
        const double room = 0.8 * budget - anomalies - hot;
        const bool over = hot + static_cast<double>(store.frozenBytes()) + anomalies > budget;
        const std::size_t gone =
            store.dropFrozenOldest(maxCalls > store.size() ? maxCalls - store.size() : 0,
                                   !over      ? SIZE_MAX
                                   : room > 0 ? static_cast<std::size_t>(room)
                                              : 0);
        r.left += gone;
        r.overBudget += over ? static_cast<std::int64_t>(gone) : 0;
    };
    dropPacked(result);
    std::size_t target = maxCalls > store.frozenCount() ? maxCalls - store.frozenCount() : 0;
    const auto bytes = static_cast<double>(store.memoryBytes());
    const bool overBudgetNow = bytes + anomalyBytes > budget;
    const auto hotBytes = bytes - static_cast<double>(store.frozenBytes());
    const double perCall = store.size() > 0 ? hotBytes / static_cast<double>(store.size()) : 0;
    if (overBudgetNow && store.size() > 0) {
        const double room =
            std::max(0.0, 0.8 * budget - anomalyBytes - static_cast<double>(store.frozenBytes()));
        double kept = room / perCall;
        if (policy.packsFinal && store.freezing() && perCall > kPackedCallBytes) {
            // Those that leave are packed (most are finished calls): T kept
            // whole and the rest packed fit when T x perCall + (n - T) x
            // packed <= room.
            const auto n = static_cast<double>(store.size());
            kept = std::max(0.0, (room - n * kPackedCallBytes) / (perCall - kPackedCallBytes));
        }
        target = std::min(target, static_cast<std::size_t>(kept));
    }
    std::set<std::uint32_t> extra;
    std::vector<std::uint32_t> packable;
    std::size_t overBudget = 0;
    const auto remaining = [&] { return store.size() - evict - extra.size(); };
    if (remaining() > target) {
        // The calls an open anomaly names, gathered once (asking the engine
        // per call was a scan of every anomaly for each named call).
        std::unordered_set<std::string> openNamed;
        for (const Anomaly& a : engine.anomalies())
            if (a.open)
                openNamed.insert(a.callIds.begin(), a.callIds.end());
        // One pass sorts the candidates into the tiers, each then taken oldest first.
        std::array<std::vector<std::pair<EpochMillis, std::uint32_t>>, 3> tiers;
        for (std::uint32_t i = 0; i < store.size(); ++i) {
            if (healthyFinished(i))
                continue;
            const bool done = finished(i);
            const bool named = engine.holds(i);
            const int tier = done && !named ? 0
                             : named        ? (openNamed.count(store.callId(i)) ? -1 : 1)
                                            : 2;
            if (tier >= 0)
                tiers[static_cast<std::size_t>(tier)].emplace_back(store.lastEventAt(i), i);
        }
        for (auto& byAge : tiers) {
            std::sort(byAge.begin(), byAge.end());
            for (std::size_t k = 0; k < byAge.size() && remaining() > target; ++k) {
                extra.insert(byAge[k].second);
                overBudget += overBudgetNow;
                // Live, over the budget, a finished call no anomaly names
                // leaves packed (a row of it read again then stays out).
                if (&byAge == &tiers[0] && policy.packsFinal && overBudgetNow)
                    packable.push_back(byAge[k].second);
            }
        }
    }
    // Still over the budget: what is left are anomalies (mostly open) and the
    // calls they name. The oldest anomalies are forgotten (live modes reported
    // each when it opened; views drop them) and their calls leave with them,
    // so that nothing judges a half-remembered call.
    const double left = perCall * static_cast<double>(remaining()) + anomalyBytes;
    if (overBudgetNow && left > 0.8 * budget) {
        std::vector<std::uint8_t> heldBefore(store.size(), 0), leaving(store.size(), 0);
        for (std::uint32_t i = 0; i < store.size(); ++i) {
            heldBefore[i] = engine.holds(i);
            leaving[i] = healthyFinished(i) || extra.count(i);
        }
        result.anomaliesForgotten = static_cast<std::int64_t>(
            engine.forgetOldest(store, static_cast<std::size_t>(left - 0.8 * budget),
                                static_cast<std::size_t>(perCall), leaving));
        for (std::uint32_t i = 0; i < store.size(); ++i)
            if (heldBefore[i] && !engine.holds(i) && extra.insert(i).second)
                ++overBudget;
    }
    if (evict == 0 && extra.empty())
        return result;
    std::size_t packed = 0;
    for (const std::uint32_t i : packable)
        if (extra.count(i) && !engine.holds(i) && !store.hasTraceLinks(i) &&
            !sharesKey(store, store.call(i)) && store.freeze(i, store.lastEventAt(i)))
            ++packed; // (still tracked: not counted as gone)
    const auto map =
        store.compact([&](std::uint32_t i) { return !healthyFinished(i) && !extra.count(i); });
    engine.remap(map);
    result.left += evict + extra.size() - packed;
    result.overBudget += static_cast<std::int64_t>(overBudget - packed);
    if (packed > 0)
        dropPacked(result); // (what was packed may still not fit: else only at the next pass)
    return result;
}

ReleaseResult releaseFinal(CallStore& store, DetectionEngine& engine, const RetentionPolicy& policy,
                           const FinalLine& line, EpochMillis now, std::size_t minFinal,
                           const std::function<void(std::uint32_t)>& onLeave) {
    const EpochMillis settledBefore = line.readTo - line.grace.count();
    const EpochMillis keysClosedBefore = line.readTo - line.keyRotationWindow.count();
    // Final: finished, settled for the grace. One that began within
    // key_rotation_window may still gain a sibling: it is frozen (when the
    // store freezes), else it stays.
    store.thawSiblings(); // each group whole before any is judged
    store.dropFrozenBefore(keysClosedBefore);
    std::vector<std::uint32_t> ready;
    std::vector<EpochMillis> freezeAt(store.size(), kNoTime); // its first event, when frozen
    for (std::uint32_t i = 0; i < store.size(); ++i) {
        const CallState& c = store.call(i);
        if (engine.holds(i) || (c.caller != 0 && !callerDone(c)) || !finishedCall(store, i, policy))
            continue;
        const EpochMillis lastAt = store.lastEventAt(i);
        if (lastAt >= settledBefore)
            continue;
        const EpochMillis keyAt = line.byLastEvent ? lastAt : firstEventAt(store, i);
        if (keyAt < keysClosedBefore) {
            ready.push_back(i);
        } else if (store.freezing() && !store.hasTraceLinks(i) && !sharesKey(store, c)) {
            ready.push_back(i);
            freezeAt[i] = keyAt;
        }
    }
    ReleaseResult r;
    if (ready.empty() || ready.size() < minFinal)
        return r;
    // Judged as the end of the load would judge them: all their data is read.
    engine.evaluate(store, ready, now);
    std::vector<std::uint8_t> leaving(store.size(), 0);
    for (const std::uint32_t i : ready) {
        if (engine.holds(i) || (freezeAt[i] != kNoTime && !store.freeze(i, freezeAt[i])))
            continue;
        // A call that came back from the frozen ones was told already.
        if (!(store.call(i).flags & Reported)) {
            if (onLeave)
                onLeave(i);
            r.left++;
            r.withRecord += store.call(i).hasRecord();
        }
        leaving[i] = 1;
    }
    if (std::find(leaving.begin(), leaving.end(), 1) != leaving.end())
        engine.remap(store.compact([&](std::uint32_t i) { return !leaving[i]; }));
    return r;
}

} // namespace callscope
