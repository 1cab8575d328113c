// expired_replay (SPEC §3, models/detectors/expired_replay.cpp): a retry after
// the record's expire_at, or a record made again. What must be flagged, and
// what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(ExpiredReplay, ExpiredReplayWhenTheRecordWasMadeAgain) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + S), Set{});
    s.record("c1", RecordStatus::Success, T0 + 10 * S, T0 + 10 * S + 40); // re-created
    s.attempt("c1", AttemptOutcome::Executed, T0 + 10 * S, T0 + 10 * S + 40);
    EXPECT_EQ(s.open(T0 + H), Set{"expired_replay:c1"});
    EXPECT_EQ(s.find(AnomalyKind::ExpiredReplay)->severity, Severity::Critical);
}

TEST(ExpiredReplay, ExpiredReplayWarningForAReplayAfterExpireAt) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 5 * S, T0 + 5 * S); // expired, not purged
    EXPECT_EQ(s.open(T0 + H), Set{"expired_replay:c1"});
    EXPECT_EQ(s.find(AnomalyKind::ExpiredReplay)->severity, Severity::Warning);
}

TEST(ExpiredReplay, ServerStampsArrivalBeforeThePlaceholderWithoutExpiredReplay) {
    Scenario s; // arrived_at a few ms before created_at is the normal order of writes
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.record("c1", RecordStatus::Success, T0 + 3, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + H), Set{});
}

TEST(ExpiredReplay, ACallerRetryAfterExpireAtIsAWarning) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 5 * S, 2); // sent again, not executed
    EXPECT_EQ(s.open(T0 + H), Set{"expired_replay:c1"});
    const Anomaly* a = s.find(AnomalyKind::ExpiredReplay);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"});
    EXPECT_EQ(a->summary, "retried after the idempotency record expired (window too short)");
    ASSERT_EQ(a->evidence.size(), 2u); // the record, then the late retry
    EXPECT_NE(a->evidence[0].what.find(", window 2s, created 40ms before"), std::string::npos)
        << a->evidence[0].what;
    EXPECT_EQ(a->evidence[1].at, T0 + 5 * S);
    EXPECT_NE(a->evidence[1].what.find("AWAITING_RESPONSE (attempt 2)"), std::string::npos)
        << a->evidence[1].what;
}

TEST(ExpiredReplay, RetriesUpToExpireAtAreNotReplays) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    s.caller("c1", CallerState::AwaitingResponse, T0 + S, 2);          // inside the window
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 2 * S, T0 + 2 * S); // at expire_at itself
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::ExpiredReplay), nullptr);
}
