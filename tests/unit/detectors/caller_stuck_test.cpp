// caller_stuck (SPEC §3, models/detectors/caller_stuck.cpp): a caller waiting
// longer than caller_alert_after (5m), never confirmed or escalated. What must
// be flagged, and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(CallerStuck, CallerStuckWaitingWithoutConfirmation) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1);
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 260, 1);
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 500);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 501);
    EXPECT_EQ(s.open(T0 + 4 * MIN), Set{});
    EXPECT_EQ(s.open(T0 + 6 * MIN), Set{"caller_stuck:c1"});
    s.caller("c1", CallerState::Escalated, T0 + 7 * MIN, 1);
    EXPECT_EQ(s.open(T0 + 8 * MIN), Set{});
}

TEST(CallerStuck, NamesTheInstanceAndSinceWhenItWaits) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-3");
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1, "api-3");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + S, 1, "api-3");
    EXPECT_EQ(s.open(T0 + 10 * MIN), Set{"caller_stuck:c1"});
    const Anomaly* a = s.find(AnomalyKind::CallerStuck);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-3"});
    EXPECT_EQ(a->summary,
              "caller api-3 waiting (TIMEOUT_UNKNOWN), no confirmation or escalation after 5m");
    EXPECT_EQ(formatIsoMillis(a->since), "2024-05-20T10:13:21.000Z");
    EXPECT_EQ(a->evidence.size(), 3u); // every caller event
}

TEST(CallerStuck, AConfirmedCallerOrUnreadCallerEventsAreNotStuck) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1);
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 260, 1);
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 500);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 501);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 2 * MIN, 1);
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::CallerStuck), nullptr);

    Scenario off(DetectionSources{true, true, false}); // caller topics not read
    off.caller("c1", CallerState::TimeoutUnknown, T0, 1);
    EXPECT_EQ(off.open(T0 + H), Set{});
    EXPECT_EQ(off.find(AnomalyKind::CallerStuck), nullptr);
}

TEST(CallerStuck, ARetryStartsTheWaitAgain) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.caller("c1", CallerState::TimeoutUnknown, T0 + S, 1);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 4 * MIN, 2); // sent again
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 4 * MIN + S, 2);
    EXPECT_EQ(s.open(T0 + 6 * MIN), Set{}); // 2 minutes into the second wait
    EXPECT_EQ(s.open(T0 + 10 * MIN), Set{"caller_stuck:c1"});
    EXPECT_EQ(formatIsoMillis(s.find(AnomalyKind::CallerStuck)->since), "2024-05-20T10:17:21.000Z");
}
