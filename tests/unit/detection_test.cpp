// Every SPEC §3 detection: the situation, what must not be flagged, and edges.
#include "models/detection_engine.h"
#include "models/diagnosis.h"
#include "models/timeline.h"

#include <gtest/gtest.h>

#include <set>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000; // 2024-05-20T10:13:20Z
constexpr EpochMillis S = 1000, MIN = 60'000, H = 3'600'000;

std::string D(int n) { // a SHA-256-looking digest
    std::string s = std::to_string(n);
    return std::string(64 - s.size(), 'a') + s;
}

class Scenario {
public:
    explicit Scenario(DetectionSources sources = {}) : engine(DetectThresholds{}, sources) {}

    Scenario& record(const std::string& id, RecordStatus st, EpochMillis created,
                     EpochMillis updated, const std::string& digest = D(1), int lock = 0,
                     const std::string& source = "api-1", EpochMillis ttl = 24 * H) {
        RecordObservation o{id, digest, st, source, lock, created, updated, created + ttl};
        store.add(o);
        return *this;
    }
    Scenario& attempt(const std::string& id, AttemptOutcome out, EpochMillis arrived,
                      EpochMillis finished, const std::string& source = "api-1",
                      const std::string& digest = D(1)) {
        AttemptObservation o;
        o.id = ++m_attemptId;
        o.callId = id;
        o.digest = digest;
        o.sourceInstance = source;
        o.outcome = out;
        o.arrivedAt = arrived;
        o.finishedAt = finished;
        store.add(o);
        return *this;
    }
    Scenario& receipt(const std::string& id, RecordStatus st, int version, EpochMillis at,
                      const std::string& digest = D(1)) {
        ReceiptObservation o;
        o.callId = id;
        o.status = st;
        o.version = version;
        o.finishedAt = at;
        o.origin.kafkaTimestamp = at;
        o.sourceInstance = "pay-svc-1";
        o.digest = digest;
        store.add(o);
        return *this;
    }
    Scenario& caller(const std::string& id, CallerState st, EpochMillis at, int attempt = 1,
                     const std::string& instance = "api-1", const std::string& bizNo = "B1",
                     const std::string& digest = D(1)) {
        CallerObservation o;
        o.callId = id;
        o.state = st;
        o.at = at;
        o.instance = instance;
        o.attempt = attempt;
        o.bizNo = bizNo;
        o.digest = digest;
        store.add(o);
        return *this;
    }
    // A healthy call: one execution, a receipt, a confirmed caller.
    Scenario& healthy(const std::string& id, EpochMillis t, const std::string& digest,
                      const std::string& bizNo, const std::string& inst = "api-1") {
        caller(id, CallerState::Initiated, t, 0, inst, bizNo, digest);
        caller(id, CallerState::AwaitingResponse, t + 1, 1, inst, bizNo, digest);
        record(id, RecordStatus::Processing, t + 2, t + 2, digest, 0, inst);
        attempt(id, AttemptOutcome::Executed, t + 2, t + 40, inst, digest);
        record(id, RecordStatus::Success, t + 2, t + 40, digest, 0, inst);
        receipt(id, RecordStatus::Processing, 1, t + 10, digest);
        receipt(id, RecordStatus::Success, 2, t + 45, digest);
        caller(id, CallerState::ConfirmedSuccess, t + 41, 1, inst, bizNo, digest);
        return *this;
    }

    // kind -> callIds (comma-joined) of the open anomalies at `now`.
    std::set<std::string> open(EpochMillis now, bool settled = true) {
        engine.setSettled(settled);
        engine.setReceiptCoverage(T0 - H, now);
        engine.evaluateAll(store, now);
        std::set<std::string> out;
        for (const Anomaly& a : engine.anomalies()) {
            if (!a.open)
                continue;
            std::string ids;
            for (const auto& id : a.callIds)
                ids += (ids.empty() ? "" : ",") + id;
            out.insert(std::string(toString(a.kind)) + ":" + ids);
        }
        return out;
    }
    const Anomaly* find(AnomalyKind k) const {
        for (const Anomaly& a : engine.anomalies())
            if (a.kind == k)
                return &a;
        return nullptr;
    }

    CallStore store;
    DetectionEngine engine;

private:
    std::int64_t m_attemptId = 0;
};

using Set = std::set<std::string>;

} // namespace

TEST(Detection, HealthyCallsAreNotAnomalies) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1").healthy("c2", T0 + S, D(2), "B2");
    EXPECT_EQ(s.open(T0 + H), Set{});
}

TEST(Detection, SameInstanceRetryWithTheSameCallIdIsNormal) {
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

TEST(Detection, DuplicateAndOutOfOrderReceiptsAreCountedNotFlagged) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 50);    // delivered twice
    s.receipt("c1", RecordStatus::Processing, 1, T0 + 55); // an older version, late
    EXPECT_EQ(s.open(T0 + H), Set{});
    EXPECT_EQ(s.store.counters().duplicateReceipts, 1);
    EXPECT_EQ(s.store.counters().outOfOrderReceipts, 1);
}

TEST(Detection, StuckProcessingAfterTheThresholdAndCriticalPastFourTimes) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.attempt("c1", AttemptOutcome::Executed, T0, kNoTime);
    EXPECT_EQ(s.open(T0 + 4 * MIN), Set{}); // young PROCESSING
    EXPECT_EQ(s.open(T0 + 6 * MIN), Set{"stuck_processing:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing)->severity, Severity::Warning);
    EXPECT_EQ(s.open(T0 + 21 * MIN), Set{"stuck_processing:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StuckProcessing)->severity, Severity::Critical);
}

TEST(Detection, StuckProcessingResolvesWhenTheRecordFinishes) {
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

TEST(Detection, StuckDeadlineFiresOnTickWithoutNewEvents) {
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

TEST(Detection, LegitimateStaleReoccupationIsNotAnomalous) {
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

TEST(Detection, DigestConflictFromAnySource) {
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

TEST(Detection, DuplicateCallerListsEachInstanceWithItsFirstTime) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1", "api-1");
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 3 * S, T0 + 3 * S, "api-2");
    EXPECT_EQ(s.open(T0 + H), Set{"duplicate_caller:c1"});
    const Anomaly* a = s.find(AnomalyKind::DuplicateCaller);
    EXPECT_EQ(a->instances, (std::vector<std::string>{"api-1", "api-2"}));
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].at, T0);
    EXPECT_EQ(a->evidence[1].at, T0 + 3 * S);
}

TEST(Detection, KeyRotationCriticalWhenBothExecuted) {
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

TEST(Detection, KeyRotationByBizNoAloneIsAWarningWhenOnlyOneExecuted) {
    Scenario s;
    s.caller("c1", CallerState::Initiated, T0, 0, "api-1", "ORD-7", "");
    s.caller("c1", CallerState::TimeoutUnknown, T0 + 250, 1, "api-1", "ORD-7", "");
    s.caller("c1", CallerState::Escalated, T0 + 300, 1, "api-1", "ORD-7", "");
    s.healthy("c2", T0 + S, D(6), "ORD-7");
    EXPECT_TRUE(s.open(T0 + H).count("key_rotation:c1,c2"));
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->severity, Severity::Warning);
}

// A bizNo every caller fills with "N/A" is shared by thousands of calls: it
// is a placeholder, reported once as a data-quality warning, and groups
// nothing (it was rebuilt per touched call, quadratic, and pinned them all).
// A real rotation under a real bizNo in the same data is still found.
TEST(Detection, PlaceholderBizNoIsReportedOnceAndGroupsNothing) {
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

TEST(Detection, KeyRotationOnlyWithinTheWindow) {
    Scenario s;
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 3 * H, D(5), "ORD-1"); // the same order placed again later
    EXPECT_EQ(s.open(T0 + 4 * H), Set{});
}

TEST(Detection, ConcurrentExecutionWhenThePlaceholderFailed) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.attempt("c1", AttemptOutcome::Executed, T0 + 20, T0 + 90); // overlaps T0+2..T0+40
    EXPECT_EQ(s.open(T0 + H), Set{"concurrent_execution:c1"});
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_NE(d.verdict.find("placeholder"), std::string::npos) << d.verdict;
}

TEST(Detection, SequentialExecutionsDoNotOverlap) {
    Scenario s(DetectionSources{true, true, true});
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 10);
    s.attempt("c1", AttemptOutcome::Executed, T0 + 20, T0 + 30);
    s.record("c1", RecordStatus::Success, T0 + 20, T0 + 30); // made again: expired_replay
    s.receipt("c1", RecordStatus::Success, 2, T0 + 31);
    const Set open = s.open(T0 + H);
    EXPECT_FALSE(open.count("concurrent_execution:c1"));
    EXPECT_TRUE(open.count("expired_replay:c1"));
}

TEST(Detection, ExpiredReplayWhenTheRecordWasMadeAgain) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + S), Set{});
    s.record("c1", RecordStatus::Success, T0 + 10 * S, T0 + 10 * S + 40); // re-created
    s.attempt("c1", AttemptOutcome::Executed, T0 + 10 * S, T0 + 10 * S + 40);
    EXPECT_EQ(s.open(T0 + H), Set{"expired_replay:c1"});
    EXPECT_EQ(s.find(AnomalyKind::ExpiredReplay)->severity, Severity::Critical);
}

TEST(Detection, ExpiredReplayWarningForAReplayAfterExpireAt) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40, D(1), 0, "api-1", 2 * S);
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    s.attempt("c1", AttemptOutcome::Replayed, T0 + 5 * S, T0 + 5 * S); // expired, not purged
    EXPECT_EQ(s.open(T0 + H), Set{"expired_replay:c1"});
    EXPECT_EQ(s.find(AnomalyKind::ExpiredReplay)->severity, Severity::Warning);
}

TEST(Detection, ServerStampsArrivalBeforeThePlaceholderWithoutExpiredReplay) {
    Scenario s; // arrived_at a few ms before created_at is the normal order of writes
    s.attempt("c1", AttemptOutcome::Executed, T0, T0 + 40);
    s.record("c1", RecordStatus::Success, T0 + 3, T0 + 40);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + H), Set{});
}

TEST(Detection, ReceiptMissingAfterGraceOnlyWhereReceiptsWereRead) {
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

// SPEC §3 "needs": which detections each combination of sources turns off.
TEST(Detection, DetectionsOffFollowWhatTheyNeed) {
    const auto kinds = [](const DetectionSources& s) {
        std::set<std::string> out;
        for (const auto& [kind, why] : detectionsOff(s)) {
            EXPECT_FALSE(why.empty());
            out.insert(std::string(toString(kind)));
        }
        return out;
    };
    using Set = std::set<std::string>;
    EXPECT_EQ(kinds({true, true, true, true}), Set{});
    EXPECT_EQ(kinds({false, true, true, true}), Set{"concurrent_execution"});
    EXPECT_EQ(kinds({true, false, true, true}), (Set{"orphan_receipt", "receipt_missing"}));
    EXPECT_EQ(kinds({true, true, false, true}), Set{"caller_stuck"});
    // The record only (a Stripe- or Powertools-style table through a view).
    EXPECT_EQ(kinds({false, false, false, true}),
              (Set{"caller_stuck", "concurrent_execution", "digest_conflict", "duplicate_caller",
                   "orphan_receipt", "receipt_missing", "receipt_regression", "state_mismatch"}));
    // Kafka only: what needs the record is off; receipts and caller events
    // still disagree, rotate keys and regress.
    EXPECT_EQ(kinds({false, true, true, false}),
              (Set{"concurrent_execution", "expired_replay", "orphan_receipt", "receipt_missing",
                   "stuck_processing"}));
    // Caller events only: nothing to disagree with.
    EXPECT_EQ(kinds({false, false, true, false}),
              (Set{"concurrent_execution", "expired_replay", "orphan_receipt", "receipt_missing",
                   "state_mismatch", "stuck_processing"}));
}

// Without the record, a receipt is not an orphan: there is nothing it could
// be missing from. A SUCCESS receipt is what tells that a rotated key ran.
TEST(Detection, KafkaOnlyJudgesWithoutTheRecord) {
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

TEST(Detection, ReceiptMissingResolvesWhenTheReceiptArrives) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.open(T0 + 2 * MIN);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 2 * MIN + S);
    EXPECT_EQ(s.open(T0 + 3 * MIN), Set{});
}

TEST(Detection, StateMismatchBetweenRecordReceiptAndCaller) {
    Scenario s;
    s.record("c1", RecordStatus::Success, T0, T0 + 40);
    s.receipt("c1", RecordStatus::Failed, 2, T0 + 41);
    EXPECT_EQ(s.open(T0 + H), Set{"state_mismatch:c1"});
    EXPECT_EQ(s.find(AnomalyKind::StateMismatch)->severity, Severity::Critical);

    Scenario caller;
    caller.healthy("c2", T0, D(2), "B2");
    caller.caller("c2", CallerState::ConfirmedFailed, T0 + 50); // also a regression? no: terminal
    EXPECT_TRUE(caller.open(T0 + H).count("state_mismatch:c2"));

    Scenario processing; // PROCESSING receipts never disagree with a terminal record
    processing.healthy("c3", T0, D(3), "B3");
    processing.receipt("c3", RecordStatus::Processing, 1, T0 + 90, D(3));
    EXPECT_EQ(processing.open(T0 + H), Set{});
}

TEST(Detection, ReceiptRegressionFromCallerOrReceipts) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    s.caller("c1", CallerState::AwaitingReceipt, T0 + 100, 1);
    EXPECT_EQ(s.open(T0 + H), Set{"receipt_regression:c1"});

    Scenario r;
    r.healthy("c2", T0, D(2), "B2");
    r.receipt("c2", RecordStatus::Failed, 2, T0 + 60); // version 2 was SUCCESS
    const Set open = r.open(T0 + H);
    EXPECT_TRUE(open.count("receipt_regression:c2"));
    EXPECT_TRUE(open.count("state_mismatch:c2"));
}

TEST(Detection, CallerStuckWaitingWithoutConfirmation) {
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

TEST(Detection, OrphanReceiptWaitsForTheRecordInLiveMode) {
    Scenario s;
    s.receipt("c1", RecordStatus::Success, 2, T0);
    EXPECT_EQ(s.open(T0 + S, false), Set{});
    EXPECT_EQ(s.open(T0 + 2 * MIN, false), Set{"orphan_receipt:c1"});
    EXPECT_EQ(s.find(AnomalyKind::OrphanReceipt)->severity, Severity::Info);
    s.record("c1", RecordStatus::Success, T0 - S, T0 - 10);
    EXPECT_EQ(s.open(T0 + 3 * MIN, false), Set{});
}

TEST(Detection, AnomaliesOpenChangeAndResolveOnce) {
    Scenario s;
    s.record("c1", RecordStatus::Processing, T0, T0);
    s.open(T0 + 6 * MIN);
    s.open(T0 + 7 * MIN); // still stuck: no new change
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

TEST(Timeline, BothLanesAsBandsOnOneAxis) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    const CallTimeline t = buildTimeline(s.store, s.store.find("c1"), T0 + 100);
    std::vector<std::string> server, caller;
    for (const StateBand& b : t.bands)
        (b.lane == Lane::ServerRecord ? server : caller).push_back(b.state);
    EXPECT_EQ(server, (std::vector<std::string>{"ABSENT", "PROCESSING", "SUCCESS"}));
    EXPECT_EQ(caller, (std::vector<std::string>{"INITIATED", "AWAITING_RESPONSE",
                                                "CONFIRMED_SUCCESS"}));
    EXPECT_EQ(t.entries.size(), 8u);
    EXPECT_TRUE(std::is_sorted(t.entries.begin(), t.entries.end(),
                               [](const auto& a, const auto& b) { return a.at < b.at; }));
}

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
