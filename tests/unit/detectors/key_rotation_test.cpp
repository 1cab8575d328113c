// key_rotation (SPEC §3, models/detectors/key_rotation.cpp): one digest (or
// bizNo) under two or more callIds within key_rotation_window (2h). What must
// be flagged, and what must not.
#include "models/diagnosis.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(KeyRotation, KeyRotationCriticalWhenBothExecuted) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1", "ORD-1", D(5));
    s.record("c1", RecordStatus::Success, T0, T0 + 500, D(5));
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 500, "api-1", D(5));
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1, "api-1", "ORD-1", D(5));
    s.healthy("c2", T0 + S, D(5), "ORD-1");
    const Set open = s.open(T0 + H);
    EXPECT_TRUE(open.count("key_rotation:c1,c2")) << ::testing::PrintToString(open);
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->severity, Severity::Critical);
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c2"));
    EXPECT_TRUE(d.steps.front().decisive);
    EXPECT_EQ(d.siblingCallIds, std::vector<std::string>{"c1"});
    EXPECT_NE(d.verdict.find("Key rotated"), std::string::npos);
}

TEST(KeyRotation, KeyRotationByBizNoAloneIsAWarningWhenOnlyOneExecuted) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1", "ORD-7", "");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1, "api-1", "ORD-7", "");
    s.caller("c1", CallerState::Escalated, T0 + 300, 1, "api-1", "ORD-7", "");
    s.healthy("c2", T0 + S, D(6), "ORD-7");
    EXPECT_TRUE(s.open(T0 + H).count("key_rotation:c1,c2"));
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->severity, Severity::Warning);
}

TEST(KeyRotation, KeyRotationOnlyWithinTheWindow) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 3 * H, D(5), "ORD-1"); // the same order placed again later
    EXPECT_EQ(s.open(T0 + 4 * H), Set{});
}

TEST(KeyRotation, ExactlyTheWindowApartIsStillOneGroup) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 2 * H, D(5), "ORD-1"); // key_rotation_window is 2h
    EXPECT_EQ(s.open(T0 + 3 * H), Set{"key_rotation:c1,c2"});
    const Anomaly* a = s.find(AnomalyKind::KeyRotation);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical); // both have a record: both executed
    EXPECT_EQ(a->callIds, (std::vector<std::string>{"c1", "c2"}));
    EXPECT_EQ(a->subject, "c1"); // named after the earliest
    EXPECT_EQ(a->digests, std::vector<std::string>{D(5)});
    EXPECT_EQ(a->summary.rfind("digest ", 0), 0u) << a->summary;
    EXPECT_NE(a->summary.find(" under 2 callIds, executed under 2: "), std::string::npos)
        << a->summary;
    // Each member's executions and its first event.
    ASSERT_EQ(a->evidence.size(), 4u);
    EXPECT_EQ(a->evidence.front().callId, "c1");
    EXPECT_EQ(a->evidence.front().at, T0);
    EXPECT_EQ(a->evidence.back().callId, "c2");
    EXPECT_EQ(a->evidence.back().what.rfind("attempt EXECUTED from api-1", 0), 0u)
        << a->evidence.back().what;
}

TEST(KeyRotation, OneMillisecondPastTheWindowIsNotARotation) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 2 * H + 1, D(5), "ORD-1");
    EXPECT_EQ(s.open(T0 + 3 * H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation), nullptr);
}
