// receipt_regression (SPEC §3, models/detectors/receipt_regression.cpp): a
// caller back from terminal to non-terminal, or one receipt version with two
// statuses. What must be flagged, and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(ReceiptRegression, ReceiptRegressionFromCallerOrReceipts) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 100, 1);
    EXPECT_EQ(s.open(T0 + H), Set{"receipt_regression:c1"});

    Scenario r;
    r.healthy("c2", T0, D(2), "B2");
    r.receipt("c2", RecordStatus::Failed, 2, T0 + 60); // version 2 was SUCCESS
    const Set open = r.open(T0 + H);
    EXPECT_TRUE(open.count("receipt_regression:c2"));
    EXPECT_TRUE(open.count("state_mismatch:c2"));
}

TEST(ReceiptRegression, ACallerBackToWaitingAfterItsConfirmation) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.record("c1", RecordStatus::Failed, T0 + 2, T0 + 40);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40);
    s.receipt("c1", RecordStatus::Failed, 2, T0 + 45);
    s.caller("c1", CallerState::ConfirmedFailed, T0 + 50, 1);
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 60, 2);
    EXPECT_EQ(s.open(T0 + H), Set{"receipt_regression:c1"});
    const Anomaly* a = s.find(AnomalyKind::ReceiptRegression);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"});
    EXPECT_EQ(a->summary, "caller moved from CONFIRMED_FAILED back to TIMEOUT_UNKNOWN");
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].at, T0 + 50);
    EXPECT_EQ(a->evidence[1].at, T0 + 60);
}

TEST(ReceiptRegression, OneReceiptVersionWithTwoStatuses) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Processing, 1, T0 + 10);
    s.receipt("c1", RecordStatus::Success, 1, T0 + 45); // version 1 again, another status
    EXPECT_EQ(s.open(T0 + H), Set{"receipt_regression:c1"});
    const Anomaly* a = s.find(AnomalyKind::ReceiptRegression);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->summary, "receipt version 1 delivered with different statuses");
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_NE(a->evidence[0].what.find("receipt v1 PROCESSING"), std::string::npos)
        << a->evidence[0].what;
    EXPECT_NE(a->evidence[1].what.find("receipt v1 SUCCESS"), std::string::npos)
        << a->evidence[1].what;
}

// Caller events are ordered by arrival, not by their `at` (another clock).
TEST(ReceiptRegression, ConfirmationsArrivingLastAreNotRegressions) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 40);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40);
    s.receipt("c1", RecordStatus::Processing, 1, T0 + 10);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 100, 1); // the caller's clock runs ahead
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 60, 1); // arrives after it
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 70, 1); // and again: still terminal
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::ReceiptRegression), nullptr);
}
