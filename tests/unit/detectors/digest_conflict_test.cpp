// digest_conflict (SPEC §3, models/detectors/digest_conflict.cpp): two or more
// request digests seen for one callId, from any source. What must be flagged,
// and what must not.
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(DigestConflict, DigestConflictFromAnySource) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.attempt("c1", AttemptOutcome::DigestConflict, T0 + S, T0 + S, "api-1", D(9));
    EXPECT_EQ(s.open(T0 + H), Set{"digest_conflict:c1"});
    EXPECT_EQ(s.find(AnomalyKind::DigestConflict)->digests.size(), 2u);

    Scenario viaCaller; // the caller's own events disagree with the record
    viaCaller.healthy("c2", T0, D(2), "B2");
    viaCaller.caller("c2", CallerState::Initiated, T0 + 5 * S, 0, "api-1", "B9", D(8));
    EXPECT_TRUE(viaCaller.open(T0 + H).count("digest_conflict:c2"));
}

TEST(DigestConflict, ASecondDigestOnAReceiptNamesBothDigests) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.receipt("c1", RecordStatus::Success, 2, T0 + 50, D(7)); // redelivered, another digest
    EXPECT_EQ(s.open(T0 + H), Set{"digest_conflict:c1"});
    const Anomaly* a = s.find(AnomalyKind::DigestConflict);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_EQ(a->callIds, std::vector<std::string>{"c1"});
    EXPECT_EQ(a->digests, (std::vector<std::string>{D(1), D(7)}));
    EXPECT_EQ(a->summary.rfind("2 request digests under one callId: ", 0), 0u) << a->summary;
    // The first event carrying each digest: the caller's first, then the receipt.
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].at, T0);
    EXPECT_EQ(a->evidence[1].at, T0 + 50);
    EXPECT_NE(a->evidence[1].what.find("receipt v2 SUCCESS"), std::string::npos)
        << a->evidence[1].what;
}

TEST(DigestConflict, OneDigestFromEverySourceIsNotAConflict) {
    Scenario s; // record, attempt, receipts and caller events all carry D(1)
    s.healthy("c1", T0, D(1), "B1");
    s.attempt("c1", AttemptOutcome::Replayed, T0 + S, T0 + S, "api-1", ""); // no digest at all
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.store.digestCount(s.store.find("c1")), 1u);
    EXPECT_EQ(s.find(AnomalyKind::DigestConflict), nullptr);
}
