// duplicate_caller (SPEC §3, models/detectors/duplicate_caller.cpp): two or
// more source instances act on one callId. What must be flagged, and what must
// not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(DuplicateCaller, DuplicateCallerListsEachInstanceWithItsFirstTime) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1", "api-1");
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 3 * S, T0 + 3 * S, "api-2");
    EXPECT_EQ(s.open(T0 + H), Set{"duplicate_caller:c1"});
    const Anomaly* a = s.find(AnomalyKind::DuplicateCaller);
    EXPECT_EQ(a->instances, (std::vector<std::string>{"api-1", "api-2"}));
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].at, T0);
    EXPECT_EQ(a->evidence[1].at, T0 + 3 * S);
}

TEST(DuplicateCaller, ASecondInstanceOfTheCallerIsAWarningNamingBoth) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1");
    s.caller("c1", CallerState::Initiated, T0 + 2 * S, 0, "api-2"); // another instance, same call
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 40, D(1), 0, "api-1");
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40, "api-1");
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 41, 1, "api-1");
    EXPECT_EQ(s.open(T0 + H), Set{"duplicate_caller:c1"});
    const Anomaly* a = s.find(AnomalyKind::DuplicateCaller);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, (std::vector<std::string>{"api-1", "api-2"}));
    // api-1 had its answer when api-2 started on the call: both sent.
    EXPECT_EQ(a->cause, "concurrent");
    EXPECT_EQ(a->summary,
              "2 caller instances acted on one callId: api-1, api-2 (concurrent: both sent)");
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[1].at, T0 + 2 * S);
    EXPECT_EQ(a->evidence[1].what.rfind("api-2 first acted: caller api-2 INITIATED", 0), 0u)
        << a->evidence[1].what;
}

TEST(DuplicateCaller, TheSameInstanceRetryingIsNotADuplicateCaller) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1", "api-1"); // its receipts come from pay-svc-1: not a caller
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 3 * S, T0 + 3 * S, "api-1");
    // A record whose first_source is unknown does not count as an instance.
    s.record("c2", RecordStatus::Success, T0, T0 + 40, D(2), 0, "");
    s.attempt("c2", AttemptOutcome::Executed, T0, T0 + 40, "api-1", D(2));
    s.receipt("c2", RecordStatus::Success, 2, T0 + 41, D(2));
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::DuplicateCaller), nullptr);
}

// SPEC §3 first-source tip: the first instance stopped, unconfirmed, and
// another took the call over (a restart, a load-balancer switch): a migration.
TEST(DuplicateCaller, AnInstanceTakingOverFromOneThatStoppedIsAMigration) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1");
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1, "api-1");
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 40, D(1), 0, "api-1");
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40, "api-1");
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    // api-1 died before its answer; api-2 picks the call up from its queue.
    s.caller("c1", CallerState::AwaitingResponse, T0 + 30 * S, 2, "api-2");
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 30 * S + 2, T0 + 30 * S + 3, "api-2");
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 30 * S + 4, 2, "api-2");
    EXPECT_EQ(s.open(T0 + H), Set{"duplicate_caller:c1"});
    const Anomaly* a = s.find(AnomalyKind::DuplicateCaller);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->cause, "migration");
    EXPECT_NE(a->summary.find("migration"), std::string::npos) << a->summary;
    EXPECT_NE(toJsonLine(*a).find(R"("cause":"migration")"), std::string::npos);
}

TEST(DuplicateCaller, TwoInstancesSendingAtOnceAreConcurrent) {
    Scenario s;
    s.caller("c1", CallerState::AwaitingResponse, T0, 1, "api-1");
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 900, "api-1");
    s.caller("c1", CallerState::AwaitingResponse, T0 + 100, 1, "api-2");
    s.attempt("c1", AttemptOutcome::InProgress, T0 + 102, T0 + 103, "api-2");
    s.caller("c1", CallerState::AwaitingResponse, T0 + 500, 2, "api-1"); // api-1 still sending
    s.open(T0 + H);
    const Anomaly* a = s.find(AnomalyKind::DuplicateCaller);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->cause, "concurrent");
}
