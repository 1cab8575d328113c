// orphan_receipt (SPEC §3, models/detectors/orphan_receipt.cpp): a receipt for
// a callId with no record, after receipt_grace in live mode. What must be
// flagged, and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(OrphanReceipt, OrphanReceiptWaitsForTheRecordInLiveMode) {
    Scenario s;
    s.receipt("c1", RecordStatus::Success, 2, T0);
    EXPECT_EQ(s.open(T0 + S, false), Set{});
    EXPECT_EQ(s.open(T0 + 2 * MIN, false), Set{"orphan_receipt:c1"});
    EXPECT_EQ(s.find(AnomalyKind::OrphanReceipt)->severity, Severity::Info);
    s.record("c1", RecordStatus::Success, T0 - S, T0 - 10);
    EXPECT_EQ(s.open(T0 + 3 * MIN, false), Set{});
}

TEST(OrphanReceipt, AtOnceInBatchModeAsInfo) {
    Scenario s;
    s.receipt("c1", RecordStatus::Success, 2, T0, D(4));
    EXPECT_EQ(s.open(T0 + S), Set{"orphan_receipt:c1"}); // settled: all there is was loaded
    const Anomaly* a = s.find(AnomalyKind::OrphanReceipt);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Info);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->digests, std::vector<std::string>{D(4)});
    EXPECT_EQ(a->summary, "receipt for a callId with no idempotency record");
    ASSERT_EQ(a->evidence.size(), 1u);
    EXPECT_EQ(a->evidence[0].at, T0);
    EXPECT_EQ(a->evidence[0].what.rfind("receipt v2 SUCCESS from pay-svc-1", 0), 0u)
        << a->evidence[0].what;
}

TEST(OrphanReceipt, ARecordArrivingWithinGraceOrNotReadMakesNoOrphan) {
    Scenario s;
    s.receipt("c1", RecordStatus::Success, 2, T0);
    EXPECT_EQ(s.open(T0 + S, false), Set{});
    s.record("c1", RecordStatus::Success, T0 - S, T0 - 10); // the record poll caught up
    EXPECT_EQ(s.open(T0 + 2 * MIN, false), Set{});
    EXPECT_EQ(s.find(AnomalyKind::OrphanReceipt), nullptr);

    Scenario kafkaOnly(DetectionSources{true, true, true, false}); // the record is not read
    kafkaOnly.receipt("c1", RecordStatus::Success, 2, T0);
    EXPECT_EQ(kafkaOnly.open(T0 + H), Set{});
    EXPECT_EQ(kafkaOnly.find(AnomalyKind::OrphanReceipt), nullptr);
}
