// The per-callId store: rows read again are applied once, and compaction keeps
// what it is told to along with its indexes.
#include "models/call_store.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace callscope;
using namespace callscope::test;

TEST(CallStore, RereadRowsAreAppliedOnce) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    const std::size_t events = s.store.events(0).size();
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 40); // the same row again
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40);
    EXPECT_EQ(s.store.events(0).size(), events);
    // An attempt first read unfinished gets its finish time, not a second event.
    s.attempt("c2", AttemptOutcome::Executed, T0, kNoTime);
    s.attempt("c2", AttemptOutcome::Executed, T0, T0 + 70);
    const std::uint32_t i2 = s.store.find("c2");
    ASSERT_EQ(s.store.events(i2).size(), 1u);
    EXPECT_EQ(s.store.timeOf(s.store.call(i2), s.store.events(i2)[0].aux), T0 + 70);
    // The same receipt message read again (a window re-read, a cold lookup of
    // a call in memory) is applied once; a redelivery (its own timestamp) is kept.
    const std::int64_t duplicates = s.store.counters().duplicateReceipts;
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    EXPECT_EQ(s.store.events(0).size(), events);
    EXPECT_EQ(s.store.counters().duplicateReceipts, duplicates);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 60);
    EXPECT_EQ(s.store.events(0).size(), events + 1);
    EXPECT_EQ(s.store.counters().duplicateReceipts, duplicates + 1);
}

TEST(CallStore, CompactionKeepsWhatItIsToldAndItsIndexes) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1").healthy("c2", T0, D(2), "B2").healthy("c3", T0, D(2), "B3");
    const auto map = s.store.compact([](std::uint32_t i) { return i != 0; });
    EXPECT_EQ(map[0], CallStore::npos);
    EXPECT_EQ(s.store.size(), 2u);
    EXPECT_EQ(s.store.find("c1"), CallStore::npos);
    const std::uint32_t c3 = s.store.find("c3");
    ASSERT_NE(c3, CallStore::npos);
    EXPECT_EQ(s.store.digest(s.store.call(c3).digest), D(2));
    EXPECT_EQ(s.store.callsWithDigest(s.store.call(c3).digest).size(), 2u);
    EXPECT_EQ(s.store.instance(s.store.events(c3).front().instance), "api-1");
    EXPECT_EQ(s.store.events(c3).size(), 8u);
}
