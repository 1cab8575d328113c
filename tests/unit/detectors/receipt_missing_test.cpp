// receipt_missing (SPEC §3, models/detectors/receipt_missing.cpp): a terminal
// record with no terminal receipt after receipt_grace (60s). What must be
// flagged, and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(ReceiptMissing, ReceiptMissingAfterGraceOnlyWhereReceiptsWereRead) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    EXPECT_EQ(s.open(T0 + 30 * S), Set{});
    EXPECT_EQ(s.open(T0 + 2 * MIN), Set{"receipt_missing:c1"});

    Scenario notRead(DetectionSources{true, false, true});
    notRead.record("c1", RecordStatus::Success, T0, T0 + 40);
    EXPECT_EQ(notRead.open(T0 + 2 * MIN), Set{});

    Scenario before; // receipts were read only from later on
    before.record("c1", RecordStatus::Success, T0, T0 + 40);
    before.engine.setReceiptCoverage(T0 + MIN, T0 + 3 * MIN);
    before.engine.evaluateAll(before.store, T0 + 3 * MIN);
    EXPECT_EQ(before.engine.openCount(), 0u);
}

TEST(ReceiptMissing, ReceiptMissingResolvesWhenTheReceiptArrives) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.open(T0 + 2 * MIN);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 2 * MIN + S);
    EXPECT_EQ(s.open(T0 + 3 * MIN), Set{});
}

TEST(ReceiptMissing, OnlyAProcessingReceiptStillMissesTheTerminalOne) {
    Scenario s;
    s.record("c1", RecordStatus::Failed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Processing, 1, T0 + 10);
    EXPECT_EQ(s.open(T0 + 2 * MIN), Set{"receipt_missing:c1"});
    const Anomaly* a = s.find(AnomalyKind::ReceiptMissing);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->instances, std::vector<std::string>{"api-1"});
    EXPECT_EQ(a->summary, "record FAILED, no terminal receipt within 1m");
    EXPECT_EQ(formatIsoMillis(a->since), "2024-05-20T10:13:20.040Z");
    ASSERT_EQ(a->evidence.size(), 2u); // the PROCESSING receipt, then the record
    EXPECT_NE(a->evidence[0].what.find("receipt v1 PROCESSING"), std::string::npos)
        << a->evidence[0].what;
}

TEST(ReceiptMissing, ATerminalReceiptWithinGraceIsNotMissing) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 50);
    s.record("c2", RecordStatus::Failed, T0, T0 + 40, D(2));
    s.receipt("c2", RecordStatus::Failed, 2, T0 + 50, D(2));
    EXPECT_EQ(s.open(T0 + 2 * MIN), Set{});
    EXPECT_EQ(s.find(AnomalyKind::ReceiptMissing), nullptr);
}
