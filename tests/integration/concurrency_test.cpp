// The threads of a live session at once, against the real stack (issue 9):
// the follow threads read PostgreSQL and Kafka while the model thread
// looks calls up cold (the dashboard's search of a callId not in memory) and
// reads result snapshots (an export with payloads). Built a second time with
// ThreadSanitizer by scripts/tsan, where any race fails the run.
#include "app/monitor.h"
#include "models/timestamp.h"
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace callscope;
using namespace callscope::test;

TEST(Concurrency, ColdLookupsAndExportWhileFollowing) {
    const TestStack s = TestStack::fresh("concurrency");
    Config config = s.config;
    config.kafka.receiptTopics = s.receiptTopic;
    config.postgres.pollInterval = Millis{100};

    // Traffic before the window (found only cold) and during following.
    SimOptions o;
    o.duration = Millis{2000};
    o.rate = 40;
    o.seed = 11;
    o.receiptTopic = s.receiptTopic;
    o.allowWritesTo = s.database;
    o.callerTopic = s.callerTopic;
    ASSERT_TRUE(runSimulation(config, o).ok);
    const SimData before = loadSimData(s.dsn, s.brokers, s.receiptTopic, s.callerTopic);
    ASSERT_FALSE(before.receipts.empty());

    Monitor m(config);
    std::atomic<bool> cancel{false};
    m.startLive(nowMillis()); // an empty window: everything so far is cold
    std::atomic<bool> simulating{true};
    std::thread traffic([&] {
        SimOptions live = o;
        live.seed = 12;
        live.duration = Millis{4000};
        live.createTopics = false;
        runSimulation(config, live);
        simulating = false;
    });

    int found = 0, snapshots = 0, errors = 0;
    auto it = before.receipts.begin();
    while (simulating) {
        m.pump(nowMillis());
        if (it == before.receipts.end())
            it = before.receipts.begin();
        const std::string& id = (it++)->first;
        try {
            ColdFetchStats stats;
            if (m.ensureCall(id, cancel, &stats) != CallStore::npos)
                ++found;
            if (!m.resultSnapshot(id).empty())
                ++snapshots;
        } catch (const SourceError&) {
            ++errors;
        }
    }
    traffic.join();
    m.pump(nowMillis());
    m.stop();
    EXPECT_GT(found, 0);
    EXPECT_GT(snapshots, 0);
    EXPECT_EQ(errors, 0);
}
