// state_mismatch (SPEC §3, models/detectors/state_mismatch.cpp): terminal
// statuses disagree between record, receipts and caller. What must be flagged,
// and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(StateMismatch, StateMismatchBetweenRecordReceiptAndCaller) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Failed, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + H), Set{"state_mismatch:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StateMismatch)->severity, Severity::Critical);

    Scenario caller;
    caller.healthy("c2", T0, D(2), "B2");
    caller.caller("c2", CallerState::ConfirmedFailed, T0 + 50); // also a regression? no: terminal
    EXPECT_TRUE(caller.open(T0 + H).count("state_mismatch:c2"));

    Scenario processing; // PROCESSING receipts never disagree with a terminal record
    processing.healthy("c3", T0, D(3), "B3");
    processing.receipt("c3", RecordStatus::Processing, 1, T0 + 90, D(3));
    EXPECT_EQ(processing.open(T0 + H), Set{});
}

TEST(StateMismatch, NamesWhichSourcesSaidWhich) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    s.caller("c1", CallerState::ConfirmedFailed, T0 + 50, 1);
    EXPECT_EQ(s.open(T0 + H), Set{"state_mismatch:c1"});
    const Anomaly* a = s.find(AnomalyKind::StateMismatch);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"}); // the caller that confirmed
    EXPECT_EQ(a->summary, "terminal states disagree: receipt+record SUCCESS; caller FAILED");
    ASSERT_EQ(a->evidence.size(), 3u);
    EXPECT_EQ(a->evidence[2].at, T0 + 50);
    EXPECT_NE(a->evidence[2].what.find("CONFIRMED_FAILED"), std::string::npos)
        << a->evidence[2].what;
}

TEST(StateMismatch, RecordReceiptAndCallerAgreeingIsNotAMismatch) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1"); // SUCCESS, a SUCCESS receipt, CONFIRMED_SUCCESS
    s.caller("c2", CallerState::Initiated, T0, 0, "api-1", "B2", D(2));
    s.record("c2", RecordStatus::Failed, T0 + 2, T0 + 40, D(2));
    s.attempt("c2", AttemptOutcome::Executed, T0 + 2, T0 + 40, "api-1", D(2));
    s.receipt("c2", RecordStatus::Failed, 2, T0 + 45, D(2));
    s.caller("c2", CallerState::ConfirmedFailed, T0 + 50, 1, "api-1", "B2", D(2));
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::StateMismatch), nullptr);
}
