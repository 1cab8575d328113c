// The window advisor (models/advice.cpp): the measured distributions, the
// recommendations and their arithmetic, and the callIds at risk.
#include "models/advice.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>

using namespace callscope;
using namespace callscope::test;

TEST(Advice, PercentilesAreNearestRankAndTheHistogramIsLogarithmic) {
    Scenario s;
    // 1000 calls processing 1..1000 ms.
    for (int k = 1; k <= 1000; ++k) {
        const std::string id = "c" + std::to_string(k);
        const EpochMillis t = T0 + k * S;
        s.attempt(id, AttemptOutcome::Executed, t, t + k);
        s.record(id, RecordStatus::Success, t, t + k);
    }
    AdviceCollector c;
    for (std::uint32_t i = 0; i < s.store.size(); ++i)
        c.addCall(s.store, i);
    const Advice a = c.finish({}, 2.0, T0, T0 + H);
    EXPECT_EQ(a.processing.count, 1000);
    EXPECT_EQ(a.processing.min, 1);
    EXPECT_EQ(a.processing.p50, 500);
    EXPECT_EQ(a.processing.p90, 900);
    EXPECT_EQ(a.processing.p99, 990);
    EXPECT_EQ(a.processing.p999, 999);
    EXPECT_EQ(a.processing.max, 1000);
    std::int64_t inHistogram = 0;
    for (const std::int64_t n : a.processing.histogram)
        inHistogram += n;
    EXPECT_EQ(inHistogram, 1000);
    EXPECT_EQ(bucketOf(1), 0u);
    EXPECT_EQ(bucketOf(10), std::size_t(kBucketsPerDecade));
    EXPECT_EQ(bucketOf(std::int64_t(1) << 50), kHistogramBuckets - 1);
    EXPECT_DOUBLE_EQ(bucketFloorMs(kBucketsPerDecade), 10.0);
    // Three times the p99.9 processing, rounded up to a second.
    ASSERT_TRUE(a.recommendedStaleTimeoutMs);
    EXPECT_EQ(*a.recommendedStaleTimeoutMs, 3000);
    EXPECT_EQ(a.staleArithmetic, "stale PROCESSING timeout >= 3 x p99.9 processing 999 ms = 3.0 s");
    EXPECT_FALSE(a.recommendedWindowMs); // no retries, no confirmations: nothing to say
}

TEST(Advice, TheWindowOutlastsTheRetryTailAndLateRetriesAreAtRisk) {
    Scenario s;
    // c1: retried 40 s later, well inside its 10-minute window.
    s.caller("c1", CallerState::AwaitingResponse, T0, 1);
    s.record("c1", RecordStatus::Success, T0 + 1, T0 + 20, D(1), 0, "api-1", 10 * MIN);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 1, T0 + 20);
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 40 * S, T0 + 40 * S + 1);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 25);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 40 * S + 2, 2);
    // c2: retried 9.5 minutes in: within the last 10% of its window.
    s.record("c2", RecordStatus::Success, T0 + 1, T0 + 20, D(2), 0, "api-1", 10 * MIN);
    s.attempt("c2", AttemptOutcome::Executed, T0 + 1, T0 + 20, "api-1", D(2));
    s.attempt("c2", AttemptOutcome::Replayed, T0 + 9 * MIN + 30 * S, T0 + 9 * MIN + 30 * S + 1,
              "api-1", D(2));
    AdviceCollector c;
    for (std::uint32_t i = 0; i < s.store.size(); ++i)
        c.addCall(s.store, i);
    Anomaly replay;
    replay.kind = AnomalyKind::ExpiredReplay;
    replay.callIds = {"c9"};
    const Advice a = c.finish({replay}, 2.0, T0, T0 + H);
    EXPECT_EQ(a.retryDelay.count, 2);
    EXPECT_EQ(a.retryDelay.max, 9 * MIN + 30 * S - 1);
    EXPECT_EQ(a.receiptDelay.count, 1);
    EXPECT_EQ(a.receiptDelay.p50, 5);
    EXPECT_EQ(a.confirmationDelay.count, 1);
    EXPECT_EQ(a.observedWindow.count, 2);
    EXPECT_EQ(a.observedWindow.min, 10 * MIN - 1);
    ASSERT_TRUE(a.recommendedWindowMs);
    EXPECT_GT(*a.recommendedWindowMs, a.retryDelay.max);
    EXPECT_EQ(*a.recommendedWindowMs, 2 * (9 * MIN + 30 * S)); // 2 x the tail, a whole second
    EXPECT_EQ(a.windowsShorterThanRecommended, 2);
    EXPECT_EQ(a.atRisk, (std::vector<std::string>{"c2", "c9"}));
    EXPECT_EQ(a.expiredReplays, 1);
    const std::string json = adviceJson(a);
    EXPECT_EQ(json.rfind(R"({"type":"advice","from":)", 0), 0u) << json;
    EXPECT_NE(json.find(R"("safety":2,)"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("atRisk":["c2","c9"])"), std::string::npos) << json;
    const std::string text = adviceText(a);
    EXPECT_NE(text.find("window >= 2 x max(p99.9 retry delay 9m 29s"), std::string::npos) << text;
    EXPECT_NE(text.find("2 of 2 records had a shorter window"), std::string::npos) << text;
}

// Live, calls final and healthy wait packed (frozen): the dashboard's advice
// measures them as it measured them held whole.
TEST(Advice, PackedCallsAreMeasuredAsTheyWereHeld) {
    Scenario s;
    s.caller("c1", CallerState::AwaitingResponse, T0, 1);
    s.record("c1", RecordStatus::Success, T0 + 1, T0 + 20, D(1), 0, "api-1", 10 * MIN);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 1, T0 + 20);
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 9 * MIN + 30 * S, T0 + 9 * MIN + 30 * S + 1);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 25);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 9 * MIN + 30 * S + 2, 2);
    for (int k = 2; k < 50; ++k) {
        const std::string id = "c" + std::to_string(k);
        s.attempt(id, AttemptOutcome::Executed, T0 + k * S, T0 + k * S + k, "api-1", D(k));
        s.record(id, RecordStatus::Success, T0 + k * S, T0 + k * S + k, D(k));
    }
    const auto measure = [&] {
        AdviceCollector c;
        for (std::uint32_t i = 0; i < s.store.size(); ++i)
            c.addCall(s.store, i);
        s.store.forEachFrozen(
            [&](std::string_view id, const CallState& call, std::span<const CallEvent> events) {
                c.addCall(s.store, id, call, events);
            });
        return c.finish({}, 2.0, T0, T0 + H);
    };
    const Advice held = measure();
    s.store.startFreezing();
    std::vector<std::uint8_t> leaving(s.store.size(), 0);
    for (std::uint32_t i = 0; i < s.store.size(); ++i)
        leaving[i] = s.store.freeze(i, firstEventAt(s.store, i));
    s.store.compact([&](std::uint32_t i) { return !leaving[i]; });
    ASSERT_EQ(s.store.size(), 0u);
    const Advice packed = measure();
    EXPECT_EQ(packed.processing.count, held.processing.count);
    EXPECT_EQ(packed.processing.p99, held.processing.p99);
    EXPECT_EQ(packed.retryDelay.max, held.retryDelay.max);
    EXPECT_EQ(packed.receiptDelay.count, 1);
    EXPECT_EQ(packed.confirmationDelay.count, 1);
    EXPECT_EQ(packed.observedWindow.count, held.observedWindow.count);
    EXPECT_EQ(packed.recommendedWindowMs, held.recommendedWindowMs);
    EXPECT_EQ(packed.atRisk, (std::vector<std::string>{"c1"}));
    EXPECT_EQ(held.atRisk, packed.atRisk);
}
