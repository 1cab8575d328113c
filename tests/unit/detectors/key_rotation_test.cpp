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
    EXPECT_EQ(d.cause, Cause::KeyRotatedAfterTimeout);
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->cause, "key_rotated_after_timeout");
}

// 坑二: the callId is lost in an async branch and made again for the same
// request with no timeout: not the timed-out retry story.
TEST(KeyRotation, ANewCallIdWithNoTimeoutBeforeItIsARegeneratedCallId) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 30, D(5), "ORD-1"); // 30 ms later, c1 still on its way
    EXPECT_EQ(s.open(T0 + H), Set{"key_rotation:c1,c2"});
    const Anomaly* a = s.find(AnomalyKind::KeyRotation);
    EXPECT_EQ(a->cause, "callid_regenerated");
    EXPECT_EQ(a->summary.find("timed-out"), std::string::npos) << a->summary;
    EXPECT_NE(a->summary.find("no timeout before it"), std::string::npos) << a->summary;
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_EQ(d.cause, Cause::CallIdRegenerated);
    EXPECT_TRUE(d.steps.front().decisive);
    EXPECT_EQ(d.verdict.find("timed out and"), std::string::npos) << d.verdict;
}

// A timeout after the new callId came is no excuse for it.
TEST(KeyRotation, ATimeoutAfterTheNewCallIdStillMeansRegenerated) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 2 * S, 1, "api-1", "ORD-1", D(5));
    s.healthy("c2", T0 + S, D(5), "ORD-1");
    s.open(T0 + H);
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->cause, "callid_regenerated");
}

// Without caller events nothing tells whether the first call timed out.
TEST(KeyRotation, WithoutCallerEventsTheCauseIsUnknown) {
    Scenario s;
    for (const char* id : {"c1", "c2"}) {
        const EpochMillis t = id[1] == '1' ? T0 : T0 + S;
        s.record(id, RecordStatus::Success, t, t + 40, D(5));
        s.attempt(id, AttemptOutcome::Executed, t, t + 40, "api-1", D(5));
    }
    s.open(T0 + H);
    const Anomaly* a = s.find(AnomalyKind::KeyRotation);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->cause, "unknown");
    EXPECT_EQ(a->summary.find("timed-out"), std::string::npos) << a->summary;
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
