// SPEC §2 retention: healthy finished calls leave memory after the window,
// anomalous and unfinished ones stay. No servers: batches are fed directly.
#include "app/monitor.h"

#include <gtest/gtest.h>

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
    stuck.records.push_back({"old-stuck", std::string(64, 'b'), RecordStatus::Processing, "api-1", 0,
                             T0, T0, T0 + 86'400'000});
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
