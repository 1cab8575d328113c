// SPEC §2 retention as policy (models/retention), without the Monitor or any
// source: which calls leave memory and which stay. The Monitor's own
// bookkeeping around it (counters, the queue) is tested in retention_test.cpp.
#include "models/retention.h"

#include <gtest/gtest.h>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000;
constexpr EpochMillis MIN = 60'000;

struct Memory {
    CallStore store;
    DetectionEngine engine;
    explicit Memory(DetectionSources sources = {}) : engine(DetectThresholds{}, sources) {}

    void record(const std::string& id, RecordStatus status, EpochMillis at) {
        store.add(RecordObservation{id, std::string(64, 'a') + id, status, "api-1", 0, at, at,
                                    at + 86'400'000});
    }
    void receipt(const std::string& id, RecordStatus status, EpochMillis at) {
        ReceiptObservation r;
        r.callId = id;
        r.status = status;
        r.version = status == RecordStatus::Processing ? 1 : 2;
        r.origin.kafkaTimestamp = at;
        store.add(r);
    }
    void caller(const std::string& id, CallerState state, EpochMillis at) {
        CallerObservation c;
        c.callId = id;
        c.state = state;
        c.at = at;
        c.instance = "api-1";
        c.attempt = 1;
        store.add(c);
    }
    bool has(const std::string& id) const { return store.find(id) != CallStore::npos; }
};

} // namespace

TEST(RetentionPolicy, HealthyFinishedCallsLeaveAfterTheWindowOthersStay) {
    Memory m;
    m.record("done-old", RecordStatus::Success, T0);
    m.receipt("done-old", RecordStatus::Success, T0 + 10);
    m.caller("done-old", CallerState::ConfirmedSuccess, T0 + 20);
    m.record("done-new", RecordStatus::Success, T0 + 50 * MIN);
    m.record("waiting", RecordStatus::Success, T0);
    m.receipt("waiting", RecordStatus::Success, T0 + 10);
    m.caller("waiting", CallerState::AwaitingReceipt, T0 + 20); // the caller is not done
    m.engine.evaluateAll(m.store, T0 + 60 * MIN);
    const RetentionResult r = applyRetention(m.store, m.engine, RetentionPolicy{}, T0 + 60 * MIN);
    EXPECT_EQ(r.left, 1u);
    EXPECT_EQ(r.overBudget, 0);
    EXPECT_FALSE(m.has("done-old"));
    EXPECT_TRUE(m.has("done-new")) << "younger than finished_calls";
    EXPECT_TRUE(m.has("waiting")) << "named by caller_stuck, and its caller is not done";
}

// Kafka only (no record): a call is finished at its terminal receipt or at
// its caller's confirmation or escalation; one with neither stays.
TEST(RetentionPolicy, WithoutTheRecordAReceiptOrTheCallerFinishesACall) {
    Memory m(DetectionSources{false, true, true, false});
    m.receipt("by-receipt", RecordStatus::Success, T0);
    m.caller("by-caller", CallerState::ConfirmedSuccess, T0);
    m.caller("escalated", CallerState::Escalated, T0);
    m.receipt("in-progress", RecordStatus::Processing, T0);
    m.engine.evaluateAll(m.store, T0 + 60 * MIN);
    RetentionPolicy kafkaOnly;
    kafkaOnly.recordsRead = false;
    const RetentionResult r = applyRetention(m.store, m.engine, kafkaOnly, T0 + 60 * MIN);
    EXPECT_EQ(r.left, 3u);
    EXPECT_TRUE(m.has("in-progress"));
    EXPECT_FALSE(m.has("by-receipt"));
    EXPECT_FALSE(m.has("by-caller"));
    EXPECT_FALSE(m.has("escalated"));
}

// Over max_calls, finished calls no anomaly names go first, oldest first,
// before any unfinished one.
TEST(RetentionPolicy, OverMaxCallsFinishedGoBeforeUnfinishedOldestFirst) {
    Memory m;
    m.record("open-1", RecordStatus::Processing, T0 + 1000);
    m.record("done-1", RecordStatus::Success, T0 + 2000);
    m.record("done-2", RecordStatus::Success, T0 + 3000);
    m.record("open-2", RecordStatus::Processing, T0 + 4000);
    m.engine.evaluateAll(m.store, T0 + 5000); // young: no anomaly yet
    RetentionPolicy policy;
    policy.maxCalls = 2;
    const RetentionResult r = applyRetention(m.store, m.engine, policy, T0 + 5000);
    EXPECT_EQ(r.left, 2u);
    EXPECT_EQ(r.overBudget, 0) << "max_calls, not the memory budget";
    EXPECT_FALSE(m.has("done-1"));
    EXPECT_FALSE(m.has("done-2"));
    EXPECT_TRUE(m.has("open-1"));
    EXPECT_TRUE(m.has("open-2"));
}
