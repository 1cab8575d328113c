// concurrent_execution (SPEC §3, models/detectors/concurrent_execution.cpp):
// executions of one callId overlapping where the first was not stale. What must
// be flagged, and what must not.
#include "models/diagnosis.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(ConcurrentExecution, ConcurrentExecutionWhenThePlaceholderFailed) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.attempt("c1", AttemptOutcome::Executed, T0 + 20, T0 + 90); // overlaps T0+2..T0+40
    EXPECT_EQ(s.open(T0 + H), Set{"concurrent_execution:c1"});
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_NE(d.verdict.find("placeholder"), std::string::npos) << d.verdict;
}

TEST(ConcurrentExecution, SequentialExecutionsDoNotOverlap) {
    Scenario s(DetectionSources{true, true, true});
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 10);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 20, T0 + 30);
    s.record("c1", RecordStatus::Success, T0 + 20, T0 + 30); // made again: expired_replay
    s.receipt("c1", RecordStatus::Success, 2, T0 + 31);
    const Set open = s.open(T0 + H);
    EXPECT_FALSE(open.count("concurrent_execution:c1"));
    EXPECT_TRUE(open.count("expired_replay:c1"));
}

TEST(ConcurrentExecution, LegitimateStaleReoccupationIsNotAnomalous) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime); // the server died
    s.attempt("c1", AttemptOutcome::Reoccupied, T0 + 10 * S, T0 + 10 * S + 50);
    s.record("c1", RecordStatus::Success, T0, T0 + 10 * S + 50, D(1), 1);
    s.receipt("c1", RecordStatus::Success, 4, T0 + 11 * S);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 11 * S, 3);
    EXPECT_EQ(s.open(T0 + H), Set{});
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_NE(d.verdict.find("re-occupied"), std::string::npos) << d.verdict;
}

TEST(ConcurrentExecution, AnExecutionWhileAnotherIsUnfinishedIsCritical) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime); // never reported its end
    s.attempt("c1", AttemptOutcome::Executed, T0 + S, T0 + 2 * S);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 2 * S + 10);
    EXPECT_EQ(s.open(T0 + H), Set{"concurrent_execution:c1"});
    const Anomaly* a = s.find(AnomalyKind::ConcurrentExecution);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"});
    EXPECT_EQ(a->summary, "2 executions of one callId overlapped: the atomic placeholder failed");
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].at, T0);
    EXPECT_NE(a->evidence[0].what.find("unfinished"), std::string::npos) << a->evidence[0].what;
    EXPECT_EQ(a->evidence[1].at, T0 + S);
}

TEST(ConcurrentExecution, NotJudgedWithoutTheAttemptLog) {
    Scenario s(DetectionSources{false, true, true}); // the same overlap, attempts not read
    s.record("c1", RecordStatus::Success, T0, T0 + 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime);
    s.attempt("c1", AttemptOutcome::Executed, T0 + S, T0 + 2 * S);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 2 * S + 10);
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.find(AnomalyKind::ConcurrentExecution), nullptr);
}
