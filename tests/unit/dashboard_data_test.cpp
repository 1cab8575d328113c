// The dashboard's 1 Hz figures (models/dashboard_data.cpp): per instance its
// counts and its lane over time, where a switch-over from one instance to
// another shows as one lane ending where the next begins.
#include "models/dashboard_data.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

using namespace callscope;
using namespace callscope::test;

namespace {

const InstanceStats* find(const DashboardSnapshot& d, const std::string& name) {
    for (const InstanceStats& s : d.instances)
        if (s.instance == name)
            return &s;
    return nullptr;
}

// The first and last bucket holding anything.
std::pair<int, int> busy(const std::vector<std::uint16_t>& lane) {
    int first = -1, last = -1;
    for (int b = 0; b < int(lane.size()); ++b)
        if (lane[std::size_t(b)] > 0) {
            first = first < 0 ? b : first;
            last = b;
        }
    return {first, last};
}

} // namespace

TEST(InstanceLanes, ASwitchOverShowsAsOneLaneEndingWhereTheNextBegins) {
    Scenario s;
    // api-1 serves the first five minutes, api-2 the next five.
    for (int k = 0; k < 10; ++k)
        s.healthy("a" + std::to_string(k), T0 + k * 30 * S, D(k + 1), "B" + std::to_string(k),
                  "api-1");
    for (int k = 0; k < 10; ++k)
        s.healthy("b" + std::to_string(k), T0 + 5 * MIN + k * 30 * S, D(k + 20),
                  "B" + std::to_string(k + 20), "api-2");
    // The call in flight at the switch: api-1 stopped unconfirmed, api-2 took it over.
    s.caller("m1", CallerState::AwaitingResponse, T0 + 4 * MIN + 50 * S, 1, "api-1", "BM", D(90));
    s.attempt("m1", AttemptOutcome::Executed, T0 + 4 * MIN + 50 * S + 2, T0 + 4 * MIN + 50 * S + 40,
              "api-1", D(90));
    s.record("m1", RecordStatus::Success, T0 + 4 * MIN + 50 * S + 2, T0 + 4 * MIN + 50 * S + 40,
             D(90), 0, "api-1");
    s.receipt("m1", RecordStatus::Success, 2, T0 + 4 * MIN + 50 * S + 45, D(90));
    s.caller("m1", CallerState::AwaitingResponse, T0 + 5 * MIN + 5 * S, 2, "api-2", "BM", D(90));
    s.attempt("m1", AttemptOutcome::Replayed, T0 + 5 * MIN + 5 * S + 2, T0 + 5 * MIN + 5 * S + 3,
              "api-2", D(90));
    s.caller("m1", CallerState::ConfirmedSuccess, T0 + 5 * MIN + 5 * S + 4, 2, "api-2", "BM",
             D(90));
    const EpochMillis now = T0 + 10 * MIN;
    s.open(now);

    DashboardSnapshot d;
    countCalls(s.store, s.engine.anomalies(), now, d);
    EXPECT_EQ(d.laneTo, now + 1);
    EXPECT_LE(d.laneFrom, T0);
    EXPECT_GT(d.laneFrom, T0 - S);
    const InstanceStats* a = find(d, "api-1");
    const InstanceStats* b = find(d, "api-2");
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->callsOverTime.size(), kLaneBuckets);
    ASSERT_EQ(b->callsOverTime.size(), kLaneBuckets);
    // Every call is in its instance's lane, once.
    EXPECT_EQ(std::accumulate(a->callsOverTime.begin(), a->callsOverTime.end(), 0), a->calls);
    EXPECT_EQ(std::accumulate(b->callsOverTime.begin(), b->callsOverTime.end(), 0), b->calls);
    EXPECT_EQ(a->calls, 11);
    EXPECT_EQ(b->calls, 11);
    // api-1's lane ends in the first half, api-2's begins in the second.
    const auto [aFirst, aLast] = busy(a->callsOverTime);
    const auto [bFirst, bLast] = busy(b->callsOverTime);
    EXPECT_EQ(aFirst, 0);
    EXPECT_LT(aLast, int(kLaneBuckets) / 2);
    EXPECT_GE(bFirst, int(kLaneBuckets) / 2 - 1); // 5 minutes in, give or take the base's second
    EXPECT_GT(bFirst, aLast);
    EXPECT_GT(bLast, int(kLaneBuckets) * 9 / 10);
    // The take-over: a retry in api-2's lane and a migration marker on both.
    EXPECT_EQ(busy(b->retriesOverTime).first, busy(b->retriesOverTime).second);
    EXPECT_GE(busy(b->retriesOverTime).first, int(kLaneBuckets) / 2);
    ASSERT_EQ(b->duplicates.size(), 1u);
    EXPECT_TRUE(b->duplicates[0].migration);
    EXPECT_EQ(b->duplicates[0].at, T0 + 5 * MIN + 5 * S);
    ASSERT_EQ(a->duplicates.size(), 1u);
    EXPECT_EQ(a->duplicates[0].at, T0 + 4 * MIN + 50 * S);
}

TEST(InstanceLanes, ClocksAheadOrADayOldStayOutOfTheLanes) {
    Scenario s;
    const EpochMillis now = T0 + 3 * 24 * H;
    s.healthy("old", T0, D(1), "B1", "api-1");               // two days before the span
    s.healthy("ahead", now + 10 * MIN, D(2), "B2", "api-1"); // a clock ahead of ours
    s.healthy("now", now - MIN, D(3), "B3", "api-1");
    DashboardSnapshot d;
    countCalls(s.store, s.engine.anomalies(), now, d);
    EXPECT_EQ(d.laneFrom, now - 24 * H);
    const InstanceStats* a = find(d, "api-1");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->calls, 3);
    EXPECT_EQ(std::accumulate(a->callsOverTime.begin(), a->callsOverTime.end(), 0), 1);
}

// Live, a call final and healthy leaves the store packed (frozen): the
// counts, the lanes and the records by status stay what they were while it
// was held (issue 12). Only calls no anomaly names freeze.
TEST(InstanceLanes, FrozenCallsCountAsTheyDidWhileHeld) {
    Scenario s;
    for (int k = 0; k < 30; ++k)
        s.healthy("c" + std::to_string(k), T0 + k * 20 * S, D(k + 1), "B" + std::to_string(k),
                  k % 3 == 0 ? "api-1" : "api-2");
    s.caller("retried", CallerState::AwaitingResponse, T0 + 2 * MIN, 1, "api-1", "BR", D(90));
    s.caller("retried", CallerState::AwaitingResponse, T0 + 2 * MIN + 5 * S, 2, "api-1", "BR",
             D(90));
    s.record("stuck", RecordStatus::Processing, T0 + 3 * MIN, T0 + 3 * MIN, D(91));
    const EpochMillis now = T0 + 11 * MIN;
    s.open(now);
    DashboardSnapshot held;
    countCalls(s.store, s.engine.anomalies(), now, held);

    s.store.startFreezing();
    PackedCallTally tally; // (the dashboard's: counted as they pack, none read)
    s.store.observeFrozen(
        [&](const CallState& c, std::span<const CallEvent> e, int sign) { tally.add(c, e, sign); });
    std::vector<std::uint8_t> leaving(s.store.size(), 0);
    for (std::uint32_t i = 0; i < s.store.size(); ++i)
        if (s.store.callId(i)[0] == 'c' && !s.engine.holds(i))
            leaving[i] = s.store.freeze(i, firstEventAt(s.store, i));
    s.engine.remap(s.store.compact([&](std::uint32_t i) { return !leaving[i]; }));
    ASSERT_EQ(s.store.frozenCount(), 30u);
    ASSERT_EQ(s.store.size(), 2u);
    DashboardSnapshot frozen;
    countCalls(s.store, s.engine.anomalies(), now, frozen);

    EXPECT_EQ(frozen.recordsByStatus, held.recordsByStatus);
    EXPECT_EQ(frozen.processingAges, held.processingAges);
    EXPECT_EQ(frozen.laneFrom, held.laneFrom);
    ASSERT_EQ(frozen.instances.size(), held.instances.size());
    for (std::size_t k = 0; k < held.instances.size(); ++k) {
        const InstanceStats &a = held.instances[k], &b = frozen.instances[k];
        EXPECT_EQ(b.instance, a.instance);
        EXPECT_EQ(b.calls, a.calls) << a.instance;
        EXPECT_EQ(b.retries, a.retries) << a.instance;
        EXPECT_EQ(b.callsOverTime, a.callsOverTime) << a.instance;
        EXPECT_EQ(b.retriesOverTime, a.retriesOverTime) << a.instance;
    }
    EXPECT_EQ(find(frozen, "api-2")->calls, 20);

    // Counted as they packed: the same figures, the lanes to the second (an
    // act may fall one bucket earlier, never later).
    const auto cumulative = [](const std::vector<std::uint16_t>& lane) {
        std::vector<int> c(kLaneBuckets + 1, 0);
        for (std::size_t b = 0; b < lane.size(); ++b)
            c[b + 1] = c[b] + lane[b];
        for (std::size_t b = lane.size(); b < kLaneBuckets; ++b)
            c[b + 1] = c[b];
        return c;
    };
    const auto expectLikeHeld = [&](const DashboardSnapshot& d) {
        EXPECT_EQ(d.recordsByStatus, held.recordsByStatus);
        EXPECT_EQ(d.laneFrom, held.laneFrom);
        ASSERT_EQ(d.instances.size(), held.instances.size());
        for (std::size_t k = 0; k < held.instances.size(); ++k) {
            const InstanceStats &a = held.instances[k], &b = d.instances[k];
            EXPECT_EQ(b.calls, a.calls) << a.instance;
            EXPECT_EQ(b.retries, a.retries) << a.instance;
            EXPECT_EQ(b.caller, a.caller) << a.instance;
            EXPECT_EQ(b.server, a.server) << a.instance;
            for (const auto& [x, y] : {std::pair{&a.callsOverTime, &b.callsOverTime},
                                       std::pair{&a.retriesOverTime, &b.retriesOverTime}}) {
                const auto h = cumulative(*x), t = cumulative(*y);
                EXPECT_EQ(t.back(), h.back()) << a.instance;
                for (std::size_t j = 1; j < kLaneBuckets; ++j) {
                    EXPECT_GE(t[j], h[j]) << a.instance << " bucket " << j;
                    EXPECT_LE(t[j], h[j + 1]) << a.instance << " bucket " << j;
                }
            }
        }
    };
    EXPECT_EQ(tally.calls(), 30);
    DashboardSnapshot tallied;
    countCalls(s.store, s.engine.anomalies(), now, tallied, &tally);
    expectLikeHeld(tallied);
    // One comes back (a search), the others are forgotten: the tally follows.
    ASSERT_NE(s.store.thawNamed("c3"), CallStore::npos);
    EXPECT_EQ(tally.calls(), 29);
    countCalls(s.store, s.engine.anomalies(), now, tallied, &tally);
    expectLikeHeld(tallied);
    s.store.dropFrozenOldest(0, SIZE_MAX);
    EXPECT_EQ(s.store.frozenCount(), 0u);
    EXPECT_EQ(tally.calls(), 0);
    DashboardSnapshot alone, talliedAlone;
    countCalls(s.store, s.engine.anomalies(), now, alone);
    countCalls(s.store, s.engine.anomalies(), now, talliedAlone, &tally);
    EXPECT_EQ(talliedAlone.recordsByStatus, alone.recordsByStatus);
    ASSERT_EQ(talliedAlone.instances.size(), alone.instances.size());
    for (std::size_t k = 0; k < alone.instances.size(); ++k) {
        EXPECT_EQ(talliedAlone.instances[k].calls, alone.instances[k].calls);
        EXPECT_EQ(talliedAlone.instances[k].callsOverTime, alone.instances[k].callsOverTime);
    }
}
