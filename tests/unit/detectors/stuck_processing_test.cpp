// stuck_processing (SPEC §3, models/detectors/stuck_processing.cpp): record
// PROCESSING for longer than stuck_after (5m); critical past four times that.
// What must be flagged, and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(StuckProcessing, StuckProcessingAfterTheThresholdAndCriticalPastFourTimes) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime);
    EXPECT_EQ(s.open(T0 + 4 * MIN), Set{}); // young PROCESSING
    EXPECT_EQ(s.open(T0 + 6 * MIN), Set{"stuck_processing:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing)->severity, Severity::Warning);
    EXPECT_EQ(s.open(T0 + 21 * MIN), Set{"stuck_processing:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing)->severity, Severity::Critical);
}

TEST(StuckProcessing, StuckProcessingResolvesWhenTheRecordFinishes) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.open(T0 + 6 * MIN);
    s.record("c1", RecordStatus::Success, T0, T0 + 7 * MIN);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 7 * MIN);
    EXPECT_EQ(s.open(T0 + 8 * MIN), Set{});
    const Anomaly* a = s.find(AnomalyKind::StuckProcessing);
    ASSERT_NE(a, nullptr);
    EXPECT_FALSE(a->open);
    EXPECT_EQ(a->resolvedAt, T0 + 8 * MIN);
}

TEST(StuckProcessing, StuckDeadlineFiresOnTickWithoutNewEvents) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.open(T0 + S);
    s.engine.takeChanges();
    s.engine.tick(s.store, T0 + 5 * MIN + 2 * S);
    const auto changes = s.engine.takeChanges();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].what, ChangeKind::Opened);
    EXPECT_EQ(changes[0].anomaly.kind, AnomalyKind::StuckProcessing);
}

TEST(StuckProcessing, FindingNamesTheRecordItsAgeAndTheUnfinishedAttempt) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0, D(1), 2, "api-1");
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime, "api-1");
    EXPECT_EQ(s.open(T0 + 6 * MIN), Set{"stuck_processing:c1"});
    const Anomaly* a = s.find(AnomalyKind::StuckProcessing);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(a->open);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"});
    EXPECT_EQ(a->digests, std::vector<std::string>{D(1)});
    // The summary holds no age; every surface adds it when it shows it.
    EXPECT_EQ(a->summary, "record PROCESSING (stuck after 5m), lock_version 2");
    EXPECT_EQ(summaryAt(*a, a->detectedAt),
              "record PROCESSING (stuck after 5m), lock_version 2; for 6m since " +
                  formatIsoMillis(a->since));
    EXPECT_EQ(summaryAt(*a, a->detectedAt + 60'000).find("; for 7m since "),
              a->summary.size());      // a minute later, a minute older
    ASSERT_EQ(a->evidence.size(), 2u); // the record and the attempt still running
    const bool unfinished = a->evidence[0].what.find("unfinished") != std::string::npos ||
                            a->evidence[1].what.find("unfinished") != std::string::npos;
    EXPECT_TRUE(unfinished) << a->evidence[0].what << " / " << a->evidence[1].what;
}

TEST(StuckProcessing, ARecordNotOlderThanStuckAfterOrFinishedIsNotStuck) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    EXPECT_EQ(s.open(T0 + 5 * MIN), Set{}); // exactly stuck_after: not longer than it
    s.record("c1", RecordStatus::Success, T0, T0 + 5 * MIN);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 5 * MIN + S);
    EXPECT_EQ(s.open(T0 + H), Set{}); // finished: never stuck, however late we look
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing), nullptr);
}

// A table last read before the threshold passed cannot show the record
// finishing: the record is judged only from a read made after it.
TEST(StuckProcessing, JudgedOnlyFromARecordReadAfterTheThreshold) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.engine.setRecordCoverage(T0 + 4 * MIN);
    EXPECT_EQ(s.open(T0 + 10 * MIN), Set{});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing), nullptr);
    s.engine.setRecordCoverage(T0 + 6 * MIN);
    EXPECT_EQ(s.open(T0 + 10 * MIN), Set{"stuck_processing:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing)->severity, Severity::Warning);
}
