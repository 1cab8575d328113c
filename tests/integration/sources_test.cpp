// Deployments as they are (issue 16): a source that is not configured turns
// its detections off, and the surfaces say so; a configured topic that does
// not exist is one line, never an anomaly per finished record.
#include "models/detection_engine.h"
#include "sim/simulator.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <chrono>
#include <set>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

// A watch line for an anomaly found (not one whose severity changed since:
// a stuck record turns critical while watch runs).
const char* const kOpened = R"({"change":"opened","type":"anomaly")";

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
        // (Both are expected in every run: at 0.05 over about 40 calls, no key
        // rotation came one run in eight; the caller's draws follow thread
        // timing, so the seed does not fix them.)
        o.faults[AnomalyKind::KeyRotation] = 0.2;
        o.receiptTopic = x->receiptTopic;
        o.callerTopic = x->callerTopic;
        o.allowWritesTo = x->database;
        const SimResult r = runSimulation(x->config, o);
        if (!r.ok)
            throw std::runtime_error(r.error);
        waitPast(nowMillis() + 1200); // past every 1 s threshold
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
    const CommandResult watch = runUntil(
        callscopeBinary() + " watch --json --since 1h --config " + config, kOpened, scanned);
    EXPECT_EQ(countOf(watch.out, kOpened), scanned) << watch.err << "scan:\n"
                                                    << r.out << "watch:\n"
                                                    << watch.out;
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

namespace {

// The detections a scan's summary line says are off.
std::set<std::string> offIn(const std::string& out) {
    std::set<std::string> kinds;
    const std::size_t at = out.find("\"detectionsOff\":{");
    if (at == std::string::npos)
        return kinds;
    const std::string obj = out.substr(at, out.find('}', at) - at);
    for (const std::string_view kind : kAnomalyKindNames)
        if (obj.find("\"" + std::string(kind) + "\":") != std::string::npos)
            kinds.insert(std::string(kind));
    return kinds;
}

std::set<std::string> foundIn(const std::string& out) {
    std::set<std::string> kinds;
    for (const std::string_view kind : kAnomalyKindNames)
        if (countOf(out, "\"kind\":\"" + std::string(kind) + "\"") > 0)
            kinds.insert(std::string(kind));
    return kinds;
}

} // namespace

// Receipts and caller events without the tables: what needs the record is
// off and said so; the rest is judged (key rotation by bizNo, receipts and
// callers disagreeing), and no receipt is an "orphan" of a record never read.
TEST(Sources, AKafkaOnlyConfigScansWatchesReportsAndInspects) {
    const TestStack& s = simulated();
    const std::string config = s.writeConfig(kShort, "enabled = false");
    const CommandResult r = scan(config);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::set<std::string> off{"callid_rewritten", "concurrent_execution", "effect_missing",
                                    "expired_replay",   "orphan_receipt",       "receipt_missing",
                                    "stuck_processing"};
    EXPECT_EQ(offIn(r.out), off);
    for (const std::string& kind : foundIn(r.out))
        EXPECT_EQ(off.count(kind), 0u) << kind << " fired although it is off";
    EXPECT_GT(countOf(r.out, "\"kind\":\"key_rotation\""), 0u);
    EXPECT_NE(r.out.find("\"records\":0,\"attempts\":0,"), std::string::npos);
    EXPECT_NE(r.err.find("stuck_processing (the idempotency record is not read"), std::string::npos)
        << r.err;
    // watch judges the same; report and inspect run without the tables.
    const std::size_t scanned = countOf(r.out, "\"type\":\"anomaly\"");
    const CommandResult watch = runUntil(
        callscopeBinary() + " watch --json --since 1h --config " + config, kOpened, scanned);
    EXPECT_EQ(countOf(watch.out, kOpened), scanned) << watch.err << "scan:\n"
                                                    << r.out << "watch:\n"
                                                    << watch.out;
    const TempFile report("kafka-only.json");
    const CommandResult rep = runCommand(callscopeBinary() + " report --since 1h -o " +
                                         report.path + " --config " + config);
    ASSERT_EQ(rep.exitCode, 0) << rep.err;
    EXPECT_NE(readFile(report.path).find("PostgreSQL: not read"), std::string::npos);
    const std::size_t id = r.out.find("\"callIds\":[\"");
    ASSERT_NE(id, std::string::npos);
    const std::string callId = r.out.substr(id + 12, r.out.find('"', id + 12) - id - 12);
    const CommandResult inspect =
        runCommand(callscopeBinary() + " inspect " + callId + " --json --config " + config);
    ASSERT_EQ(inspect.exitCode, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("\"receipt"), std::string::npos) << inspect.out.substr(0, 400);
}

// Every combination of sources: a detection whose inputs are not read is
// listed as off (and why) and never fires; what is read is still judged.
TEST(Sources, EveryCombinationJudgesOnlyWhatItReads) {
    const TestStack& s = simulated();
    struct Case {
        bool postgres, attempts, receipts, callers;
    };
    std::vector<Case> cases;
    for (int bits = 0; bits < 8; ++bits)
        cases.push_back({true, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0});
    cases.push_back({false, false, true, true});
    cases.push_back({false, false, true, false});
    cases.push_back({false, false, false, true});
    for (const Case& c : cases) {
        TestStack t = s;
        t.receiptTopic = c.receipts ? s.receiptTopic : "";
        t.callerTopic = c.callers ? s.callerTopic : "";
        const std::string name = std::string(c.postgres ? "postgres" : "kafka-only") +
                                 (c.attempts ? "+attempts" : "") + (c.receipts ? "+receipts" : "") +
                                 (c.callers ? "+callers" : "");
        SCOPED_TRACE(name);
        const std::string config =
            t.writeConfig(kShort + (c.attempts ? "" : "[postgres.attempt]\nenabled = false\n"),
                          c.postgres ? "" : "enabled = false");
        // [postgres.attempt] after [kafka] is valid TOML: a table of its own.
        const CommandResult r = scan(config);
        ASSERT_EQ(r.exitCode, 0) << r.err;
        std::set<std::string> expected;
        for (const auto& [kind, why] :
             detectionsOff(DetectionSources{c.attempts, c.receipts, c.callers, c.postgres}))
            expected.insert(std::string(toString(kind)));
        EXPECT_EQ(offIn(r.out), expected);
        const std::set<std::string> found = foundIn(r.out);
        for (const std::string& kind : found)
            EXPECT_EQ(expected.count(kind), 0u) << kind << " fired although it is off";
        if (c.postgres || c.callers) {
            EXPECT_FALSE(found.empty()) << "the faults injected leave something to find";
        }
        for (const std::string& kind : expected)
            EXPECT_NE(r.err.find(kind + " ("), std::string::npos) << kind << ": " << r.err;
    }
}

// `callscope check`: what it finds through the mapping, what is missing, and
// which detections will run; the exit code says whether it is ready.
TEST(Check, SaysWhatItFindsAndWhichDetectionsRun) {
    const TestStack& s = simulated();
    const CommandResult r =
        runCommand(callscopeBinary() + " check --config " + s.writeConfig(kShort));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    for (const char* needle :
         {"is valid", "read-only session: yes", "record  idempotent_record (table, ",
          "record.call_id            call_id", "attempt  idempotent_attempt (table, ",
          "indexed  follow: records changed", " idempotent_record_updated_at",
          "indexed  lookup: a record by callId", " partitions, ", "timestamps CreateTime",
          "newest records, ", "window reads in binary COPY", "Detections that will run (12)",
          "\nready"})
        EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
    EXPECT_EQ(r.out.find("NO INDEX"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(s.dsn.substr(s.dsn.find("password=") + 9, 16)), std::string::npos)
        << "the password is never printed";
    for (const char* id : {"record ", "attempt #", "receipt ", "caller "})
        EXPECT_NE(r.out.find(std::string("    ") + id), std::string::npos) << id << r.out;

    // A topic that does not exist and a table without the index a read needs:
    // warnings, still ready.
    {
        pqxx::connection c(s.dsn);
        pqxx::nontransaction w(c);
        w.exec("CREATE TABLE IF NOT EXISTS bare AS SELECT * FROM idempotent_record");
    }
    TestStack t = s;
    t.receiptTopic = s.receiptTopic + "-missing";
    const CommandResult warn =
        runCommand(callscopeBinary() + " check --config " +
                   t.writeConfig(kShort + "[postgres.record]\ntable = \"bare\"\n"));
    ASSERT_EQ(warn.exitCode, 0) << warn.out << warn.err;
    // Until the receipt topic exists, what needs it is off.
    EXPECT_NE(warn.out.find("Detections off (3):\n  receipt_missing"), std::string::npos)
        << warn.out;
    EXPECT_NE(warn.out.find("NO INDEX follow: records changed"), std::string::npos) << warn.out;
    EXPECT_NE(warn.out.find("add an index on bare (updated_at, call_id)"), std::string::npos)
        << warn.out;
    EXPECT_NE(warn.out.find("match no topic on the brokers"), std::string::npos) << warn.out;
    EXPECT_NE(warn.out.find("ready, with "), std::string::npos) << warn.out;

    // Columns that are not there: every one named with the table's real
    // columns, exit 2 as scan would (the mapping does not fit).
    const CommandResult bad =
        runCommand(callscopeBinary() + " check --config " +
                   TestStack(t).writeConfig(kShort + "[postgres.record]\nstatus = \"state\"\n"
                                                     "expire_at = \"expires\"\n"));
    EXPECT_EQ(bad.exitCode, 2) << bad.out << bad.err;
    EXPECT_NE(bad.out.find("PROBLEM: postgres.record.status: column \"state\" not found"),
              std::string::npos)
        << bad.out;
    EXPECT_NE(bad.out.find("PROBLEM: postgres.record.expire_at: column \"expires\" not found"),
              std::string::npos)
        << bad.out;
    EXPECT_NE(bad.out.find("(its columns: call_id, created_at, expire_at"), std::string::npos)
        << bad.out;
    EXPECT_NE(bad.out.find("record.status             state             MISSING"),
              std::string::npos)
        << bad.out;
    EXPECT_NE(bad.out.find("not ready: 2 problems"), std::string::npos) << bad.out;

    // Brokers that do not answer: a problem naming them, exit 1; PostgreSQL
    // is still described.
    TestStack down = s;
    down.brokers = "127.0.0.1:1";
    const CommandResult noKafka =
        runCommand(callscopeBinary() + " check --config " + down.writeConfig(kShort));
    EXPECT_EQ(noKafka.exitCode, 1) << noKafka.out << noKafka.err;
    EXPECT_NE(noKafka.out.find("PROBLEM: Kafka (127.0.0.1:1)"), std::string::npos) << noKafka.out;
    EXPECT_NE(noKafka.out.find("record  idempotent_record (table, "), std::string::npos)
        << noKafka.out;

    // More rights than callscope needs are said (this stack's user is a superuser).
    EXPECT_NE(r.out.find("is a superuser: callscope needs SELECT on its tables only"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("the role may write idempotent_record"), std::string::npos) << r.out;

    // A deployment without Kafka says so, and which detections are off.
    const CommandResult pgOnly =
        runCommand(callscopeBinary() + " check --config " + configWithTopics("", ""));
    ASSERT_EQ(pgOnly.exitCode, 0) << pgOnly.out;
    EXPECT_NE(pgOnly.out.find("Kafka  not read"), std::string::npos) << pgOnly.out;
    EXPECT_NE(pgOnly.out.find("Detections off (7):\n  receipt_missing"), std::string::npos)
        << pgOnly.out;
}
