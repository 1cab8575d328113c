// Deployments as they are (issue 16): a source that is not configured turns
// its detections off, and the surfaces say so; a configured topic that does
// not exist is one line, never an anomaly per finished record.
#include "connectors/simulator.h"
#include "stack.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

const std::string kShort =
    "[detect]\nstuck_after = \"1s\"\nreceipt_grace = \"1s\"\ncaller_alert_after = \"1s\"\n";

// Simulated traffic with every fault kind, receipt_missing among them.
const TestStack& simulated() {
    static TestStack* s = [] {
        auto* x = new TestStack(TestStack::fresh("sources"));
        SimOptions o;
        o.duration = Millis{2000};
        o.rate = 20;
        o.seed = 8;
        for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
            o.faults[static_cast<AnomalyKind>(i)] = 0.05;
        o.faults[AnomalyKind::ReceiptMissing] = 0.2;
        o.receiptTopic = x->receiptTopic;
        o.callerTopic = x->callerTopic;
        o.allowWritesTo = x->database;
        const SimResult r = runSimulation(x->config, o);
        if (!r.ok)
            throw std::runtime_error(r.error);
        std::this_thread::sleep_for(std::chrono::seconds(2)); // past every 1 s threshold
        return x;
    }();
    return *s;
}

std::string configWithTopics(const std::string& receipts, const std::string& callers) {
    TestStack t = simulated();
    t.receiptTopic = receipts;
    t.callerTopic = callers;
    return t.writeConfig(kShort);
}

CommandResult scan(const std::string& config) {
    return runCommand(callscopeBinary() + " scan --json --since 1h --config " + config);
}

} // namespace

TEST(Sources, APostgresOnlyConfigScansAndSaysWhichDetectionsAreOff) {
    const TestStack& s = simulated();
    const CommandResult all = scan(configWithTopics(s.receiptTopic, s.callerTopic));
    ASSERT_EQ(all.exitCode, 0) << all.err;
    ASSERT_GT(countOf(all.out, "\"kind\":\"receipt_missing\""), 0u) << "the control finds them";

    const std::string config = configWithTopics("", "");
    const CommandResult r = scan(config);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* off : {"receipt_missing", "orphan_receipt", "caller_stuck", "state_mismatch",
                            "receipt_regression"}) {
        EXPECT_EQ(countOf(r.out, std::string("\"kind\":\"") + off + "\""), 0u) << off;
        EXPECT_NE(r.err.find(off), std::string::npos) << "stderr names " << off << ": " << r.err;
    }
    EXPECT_NE(r.out.find(R"("detectionsOff":{"receipt_missing":"no receipt topics are read")"),
              std::string::npos)
        << r.out.substr(r.out.rfind("{\"type\":\"summary\""));
    // What the record and the attempt log show is still found.
    EXPECT_GT(countOf(r.out, "\"kind\":\"stuck_processing\"") +
                  countOf(r.out, "\"kind\":\"key_rotation\"") +
                  countOf(r.out, "\"kind\":\"concurrent_execution\""),
              0u);

    // watch and report run on it too; the report says what is not read.
    const std::size_t scanned = countOf(r.out, "\"type\":\"anomaly\"");
    const CommandResult watch =
        runUntil(callscopeBinary() + " watch --json --since 1h --config " + config,
                 "\"type\":\"anomaly\"", scanned);
    EXPECT_EQ(countOf(watch.out, "\"type\":\"anomaly\""), scanned) << watch.err;
    const TempFile report("pg-only.json");
    const CommandResult rep = runCommand(callscopeBinary() + " report --since 1h -o " +
                                         report.path + " --config " + config);
    ASSERT_EQ(rep.exitCode, 0) << rep.err;
    const std::string json = readFile(report.path);
    EXPECT_NE(json.find("Kafka: not read"), std::string::npos);
    EXPECT_NE(json.find("Detections off: "), std::string::npos);
}

TEST(Sources, AReceiptTopicThatDoesNotExistIsOneLineNotAStorm) {
    const TestStack& s = simulated();
    for (const std::string& missing :
         {s.receiptTopic + "-missing", std::string("^nothing-matches-this\\\\..*")}) {
        SCOPED_TRACE(missing);
        const CommandResult r = scan(configWithTopics(missing, s.callerTopic));
        ASSERT_EQ(r.exitCode, 0) << r.err;
        EXPECT_EQ(countOf(r.out, "\"kind\":\"receipt_missing\""), 0u);
        EXPECT_EQ(countOf(r.err, "match no topic on the brokers"), 1u) << r.err;
        EXPECT_NE(r.err.find("receipt_missing is not judged"), std::string::npos) << r.err;
    }
}
