// The detection engine across kinds: healthy traffic stays quiet, anomalies
// open, change and resolve once, sources off turn their detections off, and
// placeholder keys group nothing. Each kind's own cases are in
// tests/unit/detectors/<kind>_test.cpp.
#include "models/detection_engine.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(DetectionEngine, HealthyCallsAreNotAnomalies) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1").healthy("c2", T0 + S, D(2), "B2");
    EXPECT_EQ(s.open(T0 + H), Set{});
}

TEST(DetectionEngine, SameInstanceRetryWithTheSameCallIdIsNormal) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1);
    s.record("c1", RecordStatus::Processing, T0 + 2, T0 + 2);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 400);
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1);
    s.caller("c1", CallerState::AwaitingResponse, T0 + 300, 2);
    s.attempt("c1", AttemptOutcome::InProgress, T0 + 301, T0 + 301);
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 302, 2);
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 400);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 410);
    s.caller("c1", CallerState::ConfirmedSuccess, T0 + 411, 2);
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 900, T0 + 901); // a late duplicate send
    EXPECT_EQ(s.open(T0 + H), Set{});
}

TEST(DetectionEngine, DuplicateAndOutOfOrderReceiptsAreCountedNotFlagged) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 50);    // delivered twice
    s.receipt("c1", RecordStatus::Processing, 1, T0 + 55); // an older version, late
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.store.counters().duplicateReceipts, 1);
    EXPECT_EQ(s.store.counters().outOfOrderReceipts, 1);
}

// A bizNo every caller fills with "N/A" is shared by thousands of calls: it
// is a placeholder, reported once as a data-quality warning, and groups
// nothing (it was rebuilt per touched call, quadratic, and pinned them all).
// A real rotation under a real bizNo in the same data is still found.
TEST(DetectionEngine, PlaceholderBizNoIsReportedOnceAndGroupsNothing) {
    Scenario s;
    for (int i = 0; i < 3000; ++i)
        s.healthy("n" + std::to_string(i), T0 + i, D(100 + i), "N/A");
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1", "ORD-7", "");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1, "api-1", "ORD-7", "");
    s.healthy("c2", T0 + S, D(6), "ORD-7");
    EXPECT_EQ(s.open(T0 + H), (Set{"caller_stuck:c1", "key_rotation:c1,c2"}));
    ASSERT_EQ(s.engine.placeholders().size(), 1u);
    EXPECT_EQ(s.engine.placeholders()[0].rfind("bizNo N/A shared by more than 1000 calls", 0), 0u)
        << s.engine.placeholders()[0];
    EXPECT_EQ(s.engine.takeNewPlaceholders().size(), 1u);
    s.open(T0 + H + 1); // judged again: not reported again
    EXPECT_TRUE(s.engine.takeNewPlaceholders().empty());
    EXPECT_FALSE(s.engine.holds(s.store.find("n0")));
}

// The placeholder is known by its id after the first member (each further
// member costs O(1)); a compaction renumbers ids, and the placeholder is
// still said only once.
TEST(DetectionEngine, APlaceholderIsSaidOnceAcrossACompaction) {
    Scenario s;
    for (int i = 0; i < 1200; ++i)
        s.healthy("n" + std::to_string(i), T0 + i, D(100 + i), "N/A");
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.engine.takeNewPlaceholders().size(), 1u);
    EXPECT_EQ(s.store.callsWithBizNoCount(s.store.call(s.store.find("n0")).bizNo), 1200u);
    // Drop a few calls: every id is given again.
    const auto map = s.store.compact([](std::uint32_t i) { return i % 100 != 0; });
    s.engine.remap(map);
    s.engine.evaluateAll(s.store, T0 + H + 1);
    EXPECT_TRUE(s.engine.takeNewPlaceholders().empty());
    EXPECT_EQ(s.engine.placeholders().size(), 1u);
    EXPECT_EQ(s.store.callsWithBizNoCount(s.store.call(s.store.find("n1")).bizNo), 1188u);
}

// Once a placeholder, a key stays one when most of its calls have left the
// store (a window's final calls leave while it loads, and its frozen ones at
// the end): the few left and the next ones are not grouped by it.
TEST(DetectionEngine, APlaceholderStaysOneWhenMostOfItsCallsHaveLeft) {
    Scenario s;
    for (int i = 0; i < 1200; ++i)
        s.healthy("n" + std::to_string(i), T0 + i, D(100 + i), "N/A");
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.engine.takeNewPlaceholders().size(), 1u);
    const auto map = s.store.compact([](std::uint32_t i) { return i < 3; });
    s.engine.remap(map);
    ASSERT_EQ(s.store.size(), 3u);
    // A timed-out call and a new one under the same "N/A", as a real bizNo
    // would make a key rotation (KeyRotationByBizNoAloneIsAWarning...).
    s.caller("c1", CallerState::Initiated, T0 + 10, 0, "api-1", "N/A", "");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1, "api-1", "N/A", "");
    s.caller("c1", CallerState::Escalated, T0 + 300, 1, "api-1", "N/A", "");
    s.healthy("c2", T0 + S, D(6), "N/A");
    EXPECT_EQ(s.open(T0 + 2 * H), Set{});
    EXPECT_TRUE(s.engine.takeNewPlaceholders().empty());
    EXPECT_EQ(s.engine.placeholders().size(), 1u);
}

// A call joins the owners of a bizNo once, even when its bizNo changes and
// changes back, whether few or many calls share it.
TEST(CallStore, ACallJoinsTheOwnersOfAKeyOnce) {
    for (const int others : {3, 40}) {
        Scenario s;
        for (int i = 0; i < others; ++i)
            s.healthy("o" + std::to_string(i), T0 + i, D(100 + i), "B1");
        s.caller("c1", CallerState::Initiated, T0, 0, "api-1", "B1", D(1));
        s.caller("c1", CallerState::AwaitingResponse, T0 + 1, 1, "api-1", "B2", D(1));
        s.caller("c1", CallerState::TimeoutUnknown, T0 + 2, 1, "api-1", "B1", D(1));
        const std::uint32_t b1 = s.store.call(s.store.find("o0")).bizNo;
        const auto owners = s.store.callsWithBizNo(b1);
        EXPECT_EQ(owners.size(), std::size_t(others) + 1) << others;
        EXPECT_EQ(s.store.callsWithBizNoCount(b1), std::size_t(others) + 1);
        EXPECT_EQ(std::set<std::uint32_t>(owners.begin(), owners.end()).size(), owners.size());
    }
}

// SPEC §3 "needs": which detections each combination of sources turns off.
TEST(DetectionEngine, DetectionsOffFollowWhatTheyNeed) {
    const auto kinds = [](const DetectionSources& s) {
        std::set<std::string> out;
        for (const auto& [kind, why] : detectionsOff(s)) {
            EXPECT_FALSE(why.empty());
            out.insert(std::string(toString(kind)));
        }
        return out;
    };
    using Set = std::set<std::string>;
    EXPECT_EQ(kinds({true, true, true, true, true}), Set{});
    // effect_missing needs a [probe] and the record it probes after.
    EXPECT_EQ(kinds({true, true, true, true}), Set{"effect_missing"});
    EXPECT_EQ(kinds({true, true, true, false, true}).count("effect_missing"), 1u);
    // callid_rewritten needs traceIds from both ends: caller events and attempts.
    EXPECT_EQ(kinds({false, true, true, true}),
              (Set{"effect_missing", "callid_rewritten", "concurrent_execution"}));
    EXPECT_EQ(kinds({true, false, true, true}),
              (Set{"effect_missing", "orphan_receipt", "receipt_missing"}));
    EXPECT_EQ(kinds({true, true, false, true}),
              (Set{"effect_missing", "callid_rewritten", "caller_stuck"}));
    // The record only (a Stripe- or Powertools-style table through a view).
    EXPECT_EQ(kinds({false, false, false, true}),
              (Set{"effect_missing", "callid_rewritten", "caller_stuck", "concurrent_execution",
                   "digest_conflict", "duplicate_caller", "orphan_receipt", "receipt_missing",
                   "receipt_regression", "state_mismatch"}));
    // Kafka only: what needs the record is off; receipts and caller events
    // still disagree, rotate keys and regress.
    EXPECT_EQ(kinds({false, true, true, false}),
              (Set{"effect_missing", "callid_rewritten", "concurrent_execution", "expired_replay",
                   "orphan_receipt", "receipt_missing", "stuck_processing"}));
    // Caller events only: nothing to disagree with.
    EXPECT_EQ(kinds({false, false, true, false}),
              (Set{"effect_missing", "callid_rewritten", "concurrent_execution", "expired_replay",
                   "orphan_receipt", "receipt_missing", "state_mismatch", "stuck_processing"}));
}

// Without the record, a receipt is not an orphan: there is nothing it could
// be missing from. A SUCCESS receipt is what tells that a rotated key ran.
TEST(DetectionEngine, KafkaOnlyJudgesWithoutTheRecord) {
    Scenario s(DetectionSources{false, true, true, false});
    const EpochMillis t0 = 1'700'000'000'000;
    for (const char* id : {"k-1", "k-2"}) {
        CallerObservation c;
        c.callId = id;
        c.state = CallerState::AwaitingResponse;
        c.at = t0 + (id[2] == '2' ? 5000 : 0);
        c.instance = "api-1";
        c.bizNo = "ORD-7";
        s.store.add(c);
        ReceiptObservation r;
        r.callId = id;
        r.status = RecordStatus::Success;
        r.version = 2;
        r.finishedAt = c.at + 100;
        s.store.add(r);
    }
    s.engine.evaluateAll(s.store, t0 + 3'600'000);
    int rotations = 0;
    for (const Anomaly& a : s.engine.anomalies()) {
        EXPECT_NE(a.kind, AnomalyKind::OrphanReceipt);
        if (a.kind == AnomalyKind::KeyRotation) {
            ++rotations;
            EXPECT_EQ(a.severity, Severity::Critical) << a.summary;
        }
    }
    EXPECT_EQ(rotations, 1);
}

TEST(DetectionEngine, AnomaliesOpenChangeAndResolveOnce) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.open(T0 + 6 * MIN);
    s.open(T0 + 7 * MIN);  // still stuck: no new change
    s.open(T0 + 21 * MIN); // critical now: a change
    s.record("c1", RecordStatus::Failed, T0, T0 + 22 * MIN);
    s.receipt("c1", RecordStatus::Failed, 2, T0 + 22 * MIN);
    s.open(T0 + 23 * MIN);
    std::vector<ChangeKind> kinds;
    for (const auto& c : s.engine.takeChanges())
        kinds.push_back(c.what);
    EXPECT_EQ(kinds, (std::vector<ChangeKind>{ChangeKind::Opened, ChangeKind::Changed,
                                              ChangeKind::Resolved}));
}
