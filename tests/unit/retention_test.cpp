// SPEC §2 retention: healthy finished calls leave memory after the window,
// anomalous and unfinished ones stay. No servers: batches are fed directly.
#include "app/monitor.h"
#include "models/retention.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000;

ObservationBatch healthy(const std::string& id, EpochMillis t) {
    ObservationBatch b;
    const std::string digest(64, 'a');
    b.records.push_back({id, id + digest.substr(id.size()), RecordStatus::Success, "api-1", 0, t,
                         t + 40, t + 86'400'000});
    ReceiptObservation r;
    r.callId = id;
    r.status = RecordStatus::Success;
    r.version = 2;
    r.origin.kafkaTimestamp = t + 41;
    b.receipts.push_back(r);
    return b;
}

} // namespace

TEST(Retention, HealthyFinishedCallsLeaveAnomalousOnesStay) {
    Config config;
    config.retention.finishedCalls = Millis{30 * 60'000};
    Monitor m(config);
    m.deliver(healthy("old-healthy", T0));
    m.deliver(healthy("new-healthy", T0 + 50 * 60'000));
    ObservationBatch stuck; // PROCESSING forever: anomalous
    stuck.records.push_back({"old-stuck", std::string(64, 'b'), RecordStatus::Processing, "api-1",
                             0, T0, T0, T0 + 86'400'000});
    m.deliver(std::move(stuck));
    m.pump(T0 + 10 * 60'000); // stuck for 10 minutes: a warning
    ASSERT_EQ(m.store().size(), 3u);
    EXPECT_TRUE(m.engine().holds(m.store().find("old-stuck")));

    EXPECT_EQ(m.applyRetention(T0 + 60 * 60'000), 1u);
    EXPECT_EQ(m.store().size(), 2u);
    EXPECT_EQ(m.store().find("old-healthy"), CallStore::npos);
    EXPECT_NE(m.store().find("new-healthy"), CallStore::npos);
    EXPECT_NE(m.store().find("old-stuck"), CallStore::npos);

    // Detections go on over the compacted store: the stuck record turns critical.
    const auto changes = m.pump(T0 + 60 * 60'000);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].anomaly.severity, Severity::Critical);
}

TEST(Retention, MaxCallsEvictsTheOldestHealthyFirst) {
    Config config;
    config.retention.maxCalls = 2;
    Monitor m(config);
    for (int i = 0; i < 4; ++i)
        m.deliver(healthy("c" + std::to_string(i), T0 + i * 1000));
    m.pump(T0 + 10'000);
    EXPECT_EQ(m.applyRetention(T0 + 10'000), 2u);
    EXPECT_EQ(m.store().find("c0"), CallStore::npos);
    EXPECT_EQ(m.store().find("c1"), CallStore::npos);
    EXPECT_NE(m.store().find("c3"), CallStore::npos);
}

// [store] max_bytes: over budget, finished calls no anomaly names go first
// (however young), then calls whose anomalies are resolved; calls an open
// anomaly names stay. Before, nothing bounded the GUI's store.
TEST(Retention, MemoryBudgetEvictsHealthyFirstAndKeepsOpenAnomalies) {
    Config config;
    config.retention.finishedCalls = Millis{24 * 3'600'000}; // age alone evicts nothing
    Monitor m(config);
    for (int i = 0; i < 40000; ++i)
        m.deliver(healthy("h" + std::to_string(i), T0 + i));
    ObservationBatch stuck;
    stuck.records.push_back({"stuck", std::string(64, 'b'), RecordStatus::Processing, "api-1", 0,
                             T0, T0, T0 + 86'400'000});
    m.deliver(std::move(stuck));
    m.pump(T0 + 10 * 60'000);
    EXPECT_EQ(m.applyRetention(T0 + 10 * 60'000), 0u); // under the default 1 GiB
    const std::size_t bytes = m.store().memoryBytes();

    Config tight = config;
    tight.retention.maxBytes = static_cast<std::int64_t>(bytes / 4);
    Monitor t(tight);
    for (int i = 0; i < 40000; ++i)
        t.deliver(healthy("h" + std::to_string(i), T0 + i));
    ObservationBatch stuck2;
    stuck2.records.push_back({"stuck", std::string(64, 'b'), RecordStatus::Processing, "api-1", 0,
                              T0, T0, T0 + 86'400'000});
    t.deliver(std::move(stuck2));
    t.pump(T0 + 10 * 60'000);
    const std::size_t evicted = t.applyRetention(T0 + 10 * 60'000);
    EXPECT_GT(evicted, 20000u);
    EXPECT_LE(t.store().memoryBytes(), static_cast<std::size_t>(tight.retention.maxBytes));
    EXPECT_NE(t.store().find("stuck"), CallStore::npos); // named by an open anomaly
    EXPECT_EQ(t.store().find("h0"), CallStore::npos);    // the oldest went first
    EXPECT_NE(t.store().find("h39999"), CallStore::npos);
    EXPECT_EQ(t.evictions().overBudget, static_cast<std::int64_t>(evicted));
    EXPECT_EQ(t.evictions().total, static_cast<std::int64_t>(evicted));
}

// [store] max_field_bytes: a callId, instance or bizNo longer than the cap
// is rejected as "oversized field", the rest of the batch goes on.
TEST(Retention, OversizedFieldsAreRejectedNotStored) {
    Config config;
    config.retention.maxFieldBytes = 256;
    Monitor m(config);
    ObservationBatch b = healthy("fine", T0);
    CallerObservation e;
    e.callId = "caller-ok";
    e.state = CallerState::Initiated;
    e.at = T0;
    e.instance = "i";
    e.bizNo = std::string(300'000, 'N');
    b.callerEvents.push_back(e);
    ReceiptObservation r;
    r.callId = std::string(300, 'x');
    r.status = RecordStatus::Success;
    b.receipts.push_back(r);
    m.deliver(std::move(b));
    m.pump(T0 + 1000);
    EXPECT_NE(m.store().find("fine"), CallStore::npos);
    EXPECT_EQ(m.store().find("caller-ok"), CallStore::npos);
    EXPECT_EQ(m.store().find(std::string(300, 'x')), CallStore::npos);
    EXPECT_EQ(m.rejects().byReason.at("oversized field"), 2);
    for (const auto& s : m.rejects().samples)
        EXPECT_LT(s.sample.size(), 100u) << "samples are short, never the whole value";
}

// The queue between the sources and the model thread is bounded: a source
// delivering while the model thread is busy waits for room instead of
// growing the queue without limit, and nothing is lost.
TEST(Retention, SourcesWaitForRoomWhileTheModelThreadIsBusy) {
    Config config;
    Monitor m(config);
    m.pump(T0); // this thread applies batches from now on
    std::atomic<int> delivered{0};
    std::thread source([&] {
        for (int b = 0; b < 300; ++b) {
            ObservationBatch batch;
            for (int i = 0; i < 1000; ++i) // cheap to apply: the test is about the queue
                batch.rejected.push_back({"not JSON", "t/0@" + std::to_string(b * 1000 + i), "x"});
            m.deliver(std::move(batch));
            delivered++;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the model thread is "busy"
    EXPECT_LE(m.queued(), Monitor::kMaxQueued + 1000);
    EXPECT_LT(delivered.load(), 300);
    while (delivered.load() < 300) {
        m.pump(T0 + 1000);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    source.join();
    m.pump(T0 + 1000);
    EXPECT_EQ(m.rejects().total(), 300'000);
    EXPECT_EQ(m.queued(), 0u);
}

// max_calls holds for unfinished calls too (only finished ones were evicted
// before, so a flood of calls that never finish grew past it).
TEST(Retention, MaxCallsHoldsForUnfinishedCallsToo) {
    Config config;
    config.retention.maxCalls = 2;
    Monitor m(config);
    for (int i = 0; i < 4; ++i) {
        ObservationBatch b;
        b.records.push_back({"p" + std::to_string(i), std::string(63, 'd') + char('0' + i),
                             RecordStatus::Processing, "api-1", 0, T0 + i * 1000, T0 + i * 1000,
                             T0 + 86'400'000});
        m.deliver(std::move(b));
    }
    m.pump(T0 + 5000); // young: no anomaly names them yet
    EXPECT_TRUE(m.engine().anomalies().empty());
    EXPECT_EQ(m.applyRetention(T0 + 5000), 2u);
    EXPECT_EQ(m.store().size(), 2u);
    EXPECT_EQ(m.store().find("p0"), CallStore::npos);
    EXPECT_NE(m.store().find("p3"), CallStore::npos);
}

// Anomalies resolved longer ago than finished_calls are forgotten (a long
// live run kept every anomaly it ever saw) and their calls can leave memory.
TEST(Retention, ResolvedAnomaliesAreForgottenAfterTheRetentionWindow) {
    Config config;
    config.retention.finishedCalls = Millis{30 * 60'000};
    Monitor m(config);
    ObservationBatch stuck;
    stuck.records.push_back({"slow", std::string(64, 'e'), RecordStatus::Processing, "api-1", 0, T0,
                             T0, T0 + 86'400'000});
    m.deliver(std::move(stuck));
    m.pump(T0 + 6 * 60'000);
    ASSERT_EQ(m.engine().anomalies().size(), 1u);
    ObservationBatch done;
    done.records.push_back({"slow", std::string(64, 'e'), RecordStatus::Success, "api-1", 0, T0,
                            T0 + 7 * 60'000, T0 + 86'400'000});
    m.deliver(std::move(done));
    m.pump(T0 + 7 * 60'000);
    ASSERT_FALSE(m.engine().anomalies()[0].open);
    EXPECT_EQ(m.applyRetention(T0 + 20 * 60'000), 0u); // resolved 13 minutes ago: kept
    EXPECT_EQ(m.engine().anomalies().size(), 1u);
    EXPECT_EQ(m.applyRetention(T0 + 40 * 60'000), 1u); // 33 minutes ago: forgotten, call gone
    EXPECT_TRUE(m.engine().anomalies().empty());
    EXPECT_EQ(m.store().find("slow"), CallStore::npos);
}

namespace {

// `n` records stuck in PROCESSING, each its own open stuck_processing
// anomaly, each retried `retries` times (answered "in progress").
Monitor& stuckCalls(Monitor& m, int n, int retries = 0) {
    ObservationBatch b;
    for (int k = 0; k < n; ++k) {
        std::string digest = std::to_string(k);
        digest.resize(64, 'c');
        const std::string id = "stuck-" + std::to_string(k);
        b.records.push_back(
            {id, digest, RecordStatus::Processing, "api-1", 0, T0 + k, T0 + k, T0 + 86'400'000});
        for (int r = 0; r < retries; ++r)
            b.attempts.push_back({k * 100 + r, id, digest, "api-1", "", AttemptOutcome::InProgress,
                                  T0 + k + 1000 * r, T0 + k + 1000 * r + 5});
    }
    m.deliver(std::move(b));
    m.pump(T0 + 10 * 60'000);
    return m;
}

} // namespace

// A stream of records stuck for good keeps anomalies open for good: before,
// they and their calls were outside the budget and a long watch grew without
// bound. Over the budget, once every other call has gone, the oldest
// anomalies are forgotten and their calls leave with them (never half a call
// left to be judged again), and the views are told (a Forgotten change).
TEST(Retention, OverBudgetTheOldestAnomaliesLeaveWithTheirCalls) {
    Config config;
    Monitor probe(config);
    stuckCalls(probe, 3000, 20);
    ASSERT_EQ(probe.engine().openCount(), 3000u);
    const std::size_t calls = probe.store().memoryBytes();
    const std::size_t anomalies = probe.engine().memoryBytes();
    EXPECT_GT(anomalies, 3000u * 300); // evidence, summary, callId, digest, index entry

    Config tight = config;
    tight.retention.maxBytes = static_cast<std::int64_t>((calls + anomalies) / 2);
    Monitor m(tight);
    stuckCalls(m, 3000, 20);
    m.takeChanges();
    const std::size_t evicted = m.applyRetention(T0 + 10 * 60'000);
    const auto forgotten = static_cast<std::size_t>(m.evictions().anomalies);
    EXPECT_GT(forgotten, 1000u);
    EXPECT_LT(forgotten, 3000u);
    EXPECT_EQ(evicted, forgotten); // each stuck call left with its anomaly
    EXPECT_EQ(m.engine().openCount(), 3000u - forgotten);
    EXPECT_EQ(m.store().size(), 3000u - forgotten);
    EXPECT_LE(m.evictions().storeBytes, static_cast<std::size_t>(tight.retention.maxBytes));
    EXPECT_TRUE(m.engine().anomaliesOf("stuck-0").empty()); // the oldest went
    EXPECT_EQ(m.store().find("stuck-0"), CallStore::npos);
    EXPECT_EQ(m.engine().anomaliesOf("stuck-2999").size(), 1u); // the newest stay
    EXPECT_NE(m.store().find("stuck-2999"), CallStore::npos);
    const auto changes = m.takeChanges();
    EXPECT_EQ(changes.size(), forgotten);
    for (const auto& c : changes)
        EXPECT_EQ(c.what, ChangeKind::Forgotten);

    // Time passing re-opens nothing (a forgotten anomaly whose call stayed
    // was opened again as critical on its next deadline, over and over).
    const auto later = m.pump(T0 + 20 * 60'000);
    EXPECT_LE(later.size(), 3000u - forgotten);
    for (const auto& c : later)
        EXPECT_NE(c.what, ChangeKind::Opened) << c.anomaly.callIds.front();
    EXPECT_EQ(m.engine().anomalies().size(), 3000u - forgotten);
}

// Calls no open anomaly names leave before any anomaly is forgotten.
TEST(Retention, AnomaliesAreForgottenOnlyAfterEveryOtherCallHasGone) {
    Config config;
    config.retention.finishedCalls = Millis{24 * 3'600'000}; // age alone evicts nothing
    Monitor probe(config);
    stuckCalls(probe, 1000);
    const std::size_t stuck = probe.store().memoryBytes() + probe.engine().memoryBytes();

    Config tight = config;
    tight.retention.maxBytes = static_cast<std::int64_t>(stuck * 2);
    Monitor m(tight);
    for (int i = 0; i < 40000; ++i)
        m.deliver(healthy("h" + std::to_string(i), T0 + i));
    stuckCalls(m, 1000);
    m.applyRetention(T0 + 10 * 60'000);
    EXPECT_GT(m.evictions().overBudget, 30000);
    EXPECT_EQ(m.evictions().anomalies, 0);
    EXPECT_EQ(m.engine().openCount(), 1000u);
    EXPECT_LE(m.evictions().storeBytes, static_cast<std::size_t>(tight.retention.maxBytes));
}

// Issue 12, the streaming scan: while a window loads, a call is final once
// everything before it is read: its events lie before readTo - grace and its
// first event before readTo - key_rotation_window (no call still to come can
// share its key). Final healthy calls leave; a key-rotation pair, an unfinished
// call and anything newer stay, and the judgement of what stays is the one a
// full load gives.
TEST(ReleaseFinal, FinalHealthyCallsLeaveWhileKeysAndUnfinishedCallsStay) {
    CallStore store;
    DetectionEngine engine(DetectThresholds{}, DetectionSources{});
    const auto add = [&](const ObservationBatch& b) { store.apply(b); };
    constexpr EpochMillis hour = 3'600'000;
    for (int i = 0; i < 10; ++i) // old and healthy: final
        add(healthy("old-" + std::to_string(i), T0 + i * 1000));
    // The same request under two callIds, both executed, an hour apart: a key
    // rotation, found before either may leave.
    ObservationBatch pair = healthy("rotated-a", T0);
    ObservationBatch second = healthy("rotated-b", T0 + hour);
    pair.records[0].digest = second.records[0].digest = std::string(64, 'c');
    add(pair);
    add(second);
    ObservationBatch stuck; // PROCESSING: not finished, never final
    stuck.records.push_back({"stuck", std::string(64, 'd'), RecordStatus::Processing, "api-1", 0,
                             T0, T0, T0 + 86'400'000});
    add(stuck);
    add(healthy("recent", T0 + 3 * hour)); // its key may still be shared by calls to come
    const RetentionPolicy policy;
    const FinalLine line{T0 + 4 * hour, Millis{5 * 60'000}, Millis{2 * hour}};

    // Fewer final calls than asked for: nothing happens yet.
    EXPECT_EQ(releaseFinal(store, engine, policy, line, T0 + 5 * hour, 100).left, 0u);
    EXPECT_EQ(store.size(), 14u);

    const ReleaseResult r = releaseFinal(store, engine, policy, line, T0 + 5 * hour, 1);
    EXPECT_EQ(r.left, 10u);
    EXPECT_EQ(r.withRecord, 10u);
    EXPECT_EQ(store.size(), 4u);
    for (const char* stays : {"rotated-a", "rotated-b", "stuck", "recent"})
        EXPECT_NE(store.find(stays), CallStore::npos) << stays;
    ASSERT_EQ(engine.anomalies().size(), 1u);
    EXPECT_EQ(engine.anomalies()[0].kind, AnomalyKind::KeyRotation);
    EXPECT_EQ(engine.anomalies()[0].severity, Severity::Critical);

    // The rest of the load: judged over the compacted store as usual.
    engine.evaluateAll(store, T0 + 5 * hour);
    std::set<AnomalyKind> kinds;
    for (const Anomaly& a : engine.anomalies())
        kinds.insert(a.kind);
    EXPECT_EQ(kinds,
              (std::set<AnomalyKind>{AnomalyKind::KeyRotation, AnomalyKind::StuckProcessing}));
}

TEST(ReleaseFinal, FrozenCallsLeaveAfterTheGraceAndKeyRotationIsStillFound) {
    CallStore store;
    store.startFreezing();
    DetectionEngine engine(DetectThresholds{}, DetectionSources{});
    constexpr EpochMillis hour = 3'600'000;
    for (int i = 0; i < 10; ++i)
        store.apply(healthy("early-" + std::to_string(i), T0 + hour + i * 1000));
    ObservationBatch first = healthy("rotated-a", T0 + hour);
    first.records[0].digest = std::string(64, 'c');
    store.apply(first);
    const RetentionPolicy policy;
    // An hour later: within key_rotation_window (2 h) of every call, but the
    // grace (5 min) has passed them all: they leave, frozen.
    std::vector<std::uint32_t> told;
    const ReleaseResult r =
        releaseFinal(store, engine, policy, {T0 + 2 * hour, Millis{5 * 60'000}, Millis{2 * hour}},
                     T0 + 2 * hour, 1, [&](std::uint32_t i) { told.push_back(i); });
    EXPECT_EQ(r.left, 11u);
    EXPECT_EQ(told.size(), 11u);
    EXPECT_EQ(store.size(), 0u);
    EXPECT_EQ(store.frozenCount(), 11u);

    // A late copy of a frozen call's receipt brings it back at once (by its
    // callId); when it leaves again it is not told (nor counted) twice.
    ObservationBatch late = healthy("early-3", T0 + hour + 3000);
    late.records.clear();
    late.receipts[0].origin.kafkaTimestamp = T0 + 2 * hour + 1000;
    store.applyOnly(late);
    ASSERT_NE(store.find("early-3"), CallStore::npos);
    EXPECT_EQ(store.frozenCount(), 10u);
    told.clear();
    const ReleaseResult again = releaseFinal(
        store, engine, policy, {T0 + 2 * hour + 10 * 60'000, Millis{5 * 60'000}, Millis{2 * hour}},
        T0 + 2 * hour + 10 * 60'000, 1, [&](std::uint32_t i) { told.push_back(i); });
    EXPECT_EQ(store.find("early-3"), CallStore::npos);
    EXPECT_EQ(again.left, 0u);
    EXPECT_TRUE(told.empty());
    EXPECT_EQ(store.frozenCount(), 11u);

    // The same request under a new callId, read as a load reads (nothing
    // judged on arrival). The next release brings the first back before it
    // judges, and before it forgets what the window has passed (the first
    // began more than 2 h before this line): the group is judged whole.
    ObservationBatch second = healthy("rotated-b", T0 + 2 * hour + 20 * 60'000);
    second.records[0].digest = std::string(64, 'c');
    store.applyOnly(second);
    EXPECT_EQ(store.find("rotated-a"), CallStore::npos);
    releaseFinal(store, engine, policy,
                 {T0 + 3 * hour + 10'000, Millis{5 * 60'000}, Millis{2 * hour}},
                 T0 + 3 * hour + 10'000, 1);
    ASSERT_EQ(engine.anomalies().size(), 1u);
    EXPECT_EQ(engine.anomalies()[0].kind, AnomalyKind::KeyRotation);
    EXPECT_EQ(engine.anomalies()[0].severity, Severity::Critical);
    EXPECT_EQ(engine.anomalies()[0].callIds.size(), 2u);
    // The pair stays (the anomaly names it); the rest is forgotten.
    EXPECT_EQ(store.size(), 2u);
    EXPECT_EQ(store.frozenCount(), 0u);
}

// Live, a healthy finished call leaves whole memory once final, packed, not
// by age: the record feed reads the last clock_skew again, and a row of a
// call gone made it anew, its receipt missing (a storm of receipt_missing
// with finished_calls shorter than clock_skew). Over max_calls it still goes.
TEST(Retention, LiveFinishedCallsWaitToBePackedNotEvictedByAge) {
    CallStore store;
    store.startFreezing(true);
    DetectionEngine engine(DetectThresholds{}, DetectionSources{});
    store.apply(healthy("done", T0));
    RetentionPolicy policy;
    policy.finishedCalls = Millis{2 * 60'000};
    policy.packsFinal = true;
    EXPECT_EQ(applyRetention(store, engine, policy, T0 + 10 * 60'000).left, 0u);
    EXPECT_NE(store.find("done"), CallStore::npos);
    policy.packsFinal = false; // (a scan's, or before the window is judged)
    EXPECT_EQ(applyRetention(store, engine, policy, T0 + 10 * 60'000).left, 1u);
    store.apply(healthy("a", T0));
    store.apply(healthy("b", T0 + 1));
    policy.packsFinal = true;
    policy.maxCalls = 1;
    EXPECT_EQ(applyRetention(store, engine, policy, T0 + 10 * 60'000).left, 1u);
    EXPECT_NE(store.find("b"), CallStore::npos);

    // Over the budget, they leave whole memory packed, still tracked.
    for (int i = 0; i < 40000; ++i)
        store.apply(healthy("p" + std::to_string(i), T0 + 1000 + i));
    policy.maxCalls = 1'000'000;
    policy.maxBytes = static_cast<std::int64_t>(store.memoryBytes() / 2);
    const RetentionResult r = applyRetention(store, engine, policy, T0 + 10 * 60'000);
    EXPECT_GT(store.frozenCount(), 10000u);
    EXPECT_EQ(r.left + store.size() + store.frozenCount(), 40001u);
    EXPECT_LE(store.memoryBytes() + engine.memoryBytes(),
              static_cast<std::size_t>(policy.maxBytes)); // (at once, not at the next pass)
    EXPECT_EQ(r.overBudget, static_cast<std::int64_t>(r.left));
    const std::int64_t unchanged = store.counters().unchangedRows;
    ObservationBatch again = healthy("p0", T0 + 1000); // its row read again: it stays packed
    again.receipts.clear();
    store.apply(again);
    EXPECT_EQ(store.find("p0"), CallStore::npos);
    EXPECT_EQ(store.counters().unchangedRows, unchanged + 1);
}

// Live, a long call is kept (packed) as long after its last event as
// retention keeps any call; a scan lets it go by its first (the window has
// passed what could share its key).
TEST(ReleaseFinal, LiveALongCallIsKeptAfterItsLastEventNotItsFirst) {
    constexpr EpochMillis hour = 3'600'000;
    ObservationBatch b = healthy("long", T0);
    b.records[0].updatedAt = T0 + 2 * hour + 40 * 60'000;
    b.receipts[0].origin.kafkaTimestamp = T0 + 2 * hour + 40 * 60'000 + 1;
    CallerObservation caller; // sent at T0, confirmed 2 h 41 later
    caller.callId = "long";
    caller.instance = "api-1";
    for (const auto& [state, at] :
         {std::pair{CallerState::Initiated, T0},
          std::pair{CallerState::ConfirmedSuccess, T0 + 2 * hour + 41 * 60'000}}) {
        caller.state = state;
        caller.at = at;
        b.callerEvents.push_back(caller);
    }
    const RetentionPolicy policy;
    const auto line = [&](EpochMillis readTo, bool live) {
        return FinalLine{readTo, Millis{5 * 60'000}, Millis{2 * hour}, live};
    };
    CallStore scan;
    scan.startFreezing();
    DetectionEngine scanEngine(DetectThresholds{}, DetectionSources{});
    scan.apply(b);
    releaseFinal(scan, scanEngine, policy, line(T0 + 3 * hour, false), T0 + 3 * hour, 0);
    EXPECT_EQ(scan.size() + scan.frozenCount(), 0u);

    CallStore live;
    live.startFreezing(true);
    DetectionEngine engine(DetectThresholds{}, DetectionSources{});
    live.apply(b);
    releaseFinal(live, engine, policy, line(T0 + 3 * hour, true), T0 + 3 * hour, 0);
    EXPECT_EQ(live.size(), 0u);
    EXPECT_EQ(live.frozenCount(), 1u);
    const EpochMillis soon = T0 + 4 * hour + 30 * 60'000; // 1 h 50 after its last event
    releaseFinal(live, engine, policy, line(soon, true), soon, 0);
    EXPECT_EQ(live.frozenCount(), 1u);
    const EpochMillis later = T0 + 4 * hour + 50 * 60'000;
    releaseFinal(live, engine, policy, line(later, true), later, 0);
    EXPECT_EQ(live.frozenCount(), 0u);
}

// Live, calls final and healthy wait frozen (packed) until retention has
// passed them. They count toward max_calls and the budget, and they go
// first, oldest first, before any call held in full.
TEST(Retention, FrozenCallsCountTowardTheLimitsAndGoFirst) {
    CallStore store;
    store.startFreezing();
    DetectionEngine engine(DetectThresholds{}, DetectionSources{});
    constexpr EpochMillis hour = 3'600'000;
    constexpr int n = 20000;
    for (int i = 0; i < n; ++i)
        store.apply(healthy("f" + std::to_string(i), T0 + i * 100));
    RetentionPolicy policy;
    policy.finishedCalls = Millis{24 * hour};
    ASSERT_EQ(releaseFinal(store, engine, policy, {T0 + hour, Millis{60'000}, Millis{24 * hour}},
                           T0 + hour, 0)
                  .left,
              std::size_t{n});
    ASSERT_EQ(store.frozenCount(), std::size_t{n});
    ObservationBatch open; // in flight: held in full
    for (int i = 0; i < 5; ++i)
        open.records.push_back({"open-" + std::to_string(i), std::string(64, 'e'),
                                RecordStatus::Processing, "api-1", 0, T0 + hour, T0 + hour,
                                T0 + 86'400'000});
    store.apply(open);

    policy.maxCalls = n / 2;
    RetentionResult r = applyRetention(store, engine, policy, T0 + hour);
    EXPECT_EQ(store.size(), 5u);
    EXPECT_LE(store.size() + store.frozenCount(), std::size_t{n / 2});
    EXPECT_GT(store.frozenCount(), std::size_t{n / 2 - 3000}); // (a block at a time)
    EXPECT_EQ(r.left, std::size_t{n} - store.frozenCount());
    EXPECT_EQ(store.thawNamed("f0"), CallStore::npos);
    EXPECT_NE(store.thawNamed("f" + std::to_string(n - 1)), CallStore::npos);

    // Over the budget: frozen calls go until the budget holds with 20 %
    // headroom, the calls in flight stay.
    policy.maxCalls = 1'000'000;
    const std::size_t hot = store.memoryBytes() - store.frozenBytes();
    policy.maxBytes = static_cast<std::int64_t>(hot + store.frozenBytes() / 2);
    r = applyRetention(store, engine, policy, T0 + hour);
    EXPECT_GT(r.left, 0u);
    EXPECT_EQ(r.overBudget, static_cast<std::int64_t>(r.left));
    EXPECT_LE(store.memoryBytes() + engine.memoryBytes(),
              static_cast<std::size_t>(policy.maxBytes));
    EXPECT_GE(store.size(), 5u);
    for (int i = 0; i < 5; ++i)
        EXPECT_NE(store.find("open-" + std::to_string(i)), CallStore::npos);
}

// Issue 12: what a source delivers waits packed, and the source's batch comes
// back empty with its observations, filled again in place (their texts keep
// their buffers); everything delivered reaches the store, batch after batch
// (the packed buffers are reused), with its rejections, gaps and probes.
TEST(Retention, DeliveredBatchesArePackedAndTheSourceRefillsItsOwn) {
    Config config;
    Monitor m(config);
    ObservationBatch b;
    const CallerObservation* first = nullptr;
    const char* firstText = nullptr;
    for (int round = 0; round < 6; ++round) {
        for (int i = 0; i < 50; ++i) {
            CallerObservation& e = b.addCallerEvent();
            if (round > 0 && i == 0) {
                EXPECT_EQ(&e, first) << "the same observation, filled again";
                EXPECT_EQ(e.callId, "");
            }
            const std::string id = // (as a decoder writes it: copied, not moved in)
                "caller-call-with-a-long-identifier-" + std::to_string(10'000 + round * 50 + i);
            e.callId = id;
            if (round > 0 && i == 0) {
                EXPECT_EQ(e.callId.data(), firstText) << "its text's buffer kept";
            }
            e.state = CallerState::Initiated;
            e.at = T0 + round * 50 + i;
            e.instance = "order-api-" + std::to_string(i % 4);
            e.bizNo = "ORD-" + std::to_string(round * 50 + i);
            e.digest = std::string(64, 'c');
            e.origin = MessageOrigin{i % 3, round * 50 + i, T0};
        }
        if (round == 0) { // (once the list has grown)
            first = &b.callerEvents[0];
            firstText = first->callId.data();
        }
        b.rejected.push_back({"not JSON", "callers/0@" + std::to_string(round), "{"});
        if (round == 2) {
            b.gaps.push_back({"callers/1", 5, 8});
            b.probes.push_back({"caller-call-with-a-long-identifier-10000", false, false});
        }
        m.deliver(std::move(b));
        EXPECT_TRUE(b.empty());
        EXPECT_TRUE(b.rejected.empty());
        if (round % 2)
            m.pump(T0 + 1000); // applied while more come: its buffer packs the next
    }
    m.pump(T0 + 1000);
    EXPECT_EQ(m.queued(), 0u);
    ASSERT_EQ(m.store().size(), 300u);
    for (int k : {0, 49, 50, 299}) {
        const std::uint32_t i =
            m.store().find("caller-call-with-a-long-identifier-" + std::to_string(10'000 + k));
        ASSERT_NE(i, CallStore::npos) << k;
        EXPECT_EQ(m.store().bizNo(m.store().call(i).bizNo), "ORD-" + std::to_string(k));
        EXPECT_EQ(m.store().lastEventAt(i), T0 + k);
    }
    EXPECT_EQ(m.rejects().total(), 6);
    EXPECT_EQ(m.store().counters().callerEvents, 300);
    EXPECT_EQ(m.gaps().lostByPartition.at("callers/1"), 3);
    const CallState& probed =
        m.store().call(m.store().find("caller-call-with-a-long-identifier-10000"));
    EXPECT_TRUE(probed.flags & EffectProbed);
    EXPECT_TRUE(probed.flags & EffectMissing);
}

// However large the messages, the queue holds at most a quarter of the memory
// budget (and a batch more): a source waits for room by bytes too, and
// nothing is lost.
TEST(Retention, SourcesWaitForRoomByBytesWhenMessagesAreLarge) {
    Config config;
    config.retention.maxBytes = std::int64_t{16} << 20; // a queue of 4 MiB
    Monitor m(config);
    m.pump(T0); // this thread applies batches from now on
    const std::string bigRef(100'000, 'r');
    std::atomic<int> delivered{0};
    std::thread source([&] {
        ObservationBatch batch;
        for (int b = 0; b < 100; ++b) {
            for (int i = 0; i < 10; ++i) { // 1 MB a batch, 10 observations
                ReceiptObservation& r = batch.addReceipt();
                r.callId = "big-" + std::to_string(b * 10 + i);
                r.status = RecordStatus::Success;
                r.resultRef = bigRef;
                r.version = 2;
                r.origin.kafkaTimestamp = T0;
            }
            m.deliver(std::move(batch));
            delivered++;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the model thread is "busy"
    EXPECT_LE(m.queuedBytes(), (std::size_t{4} << 20) + 2'000'000);
    EXPECT_LT(m.queued(), Monitor::kMaxQueued); // (the count alone would not hold it)
    EXPECT_LT(delivered.load(), 100);
    while (delivered.load() < 100) {
        m.pump(T0 + 1000);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    source.join();
    m.pump(T0 + 1000);
    EXPECT_EQ(m.queuedBytes(), 0u);
    EXPECT_EQ(m.store().size(), 1000u);
    EXPECT_EQ(m.store().counters().receipts, 1000);
}
