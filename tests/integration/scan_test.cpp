// callscope scan and inspect against the real stack: a renamed deployment
// through the mapping, malformed messages, and the cold single-partition read.
#include "connectors/kafka_client.h"
#include "models/timestamp.h"
#include "sim/kafka_writer.h"
#include "sim/sim_setup.h"
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>
#include <simdjson.h>

#include <chrono>
#include <set>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

struct Simulated {
    TestStack stack;
    Situations truth;
};

Simulated simulateAllKinds(const std::string& name, double rate = 0.04) {
    Simulated s{TestStack::fresh(name), {}};
    SimOptions o;
    o.duration = Millis{3000};
    o.rate = 40;
    o.seed = 7;
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
        o.faults[static_cast<AnomalyKind>(i)] = rate;
    o.receiptTopic = s.stack.receiptTopic;
    o.allowWritesTo = s.stack.database;
    o.callerTopic = s.stack.callerTopic;
    const TempFile truth(name + "-truth.jsonl");
    o.truthPath = truth.path;
    const SimResult r = runSimulation(s.stack.config, o);
    if (!r.ok)
        throw std::runtime_error("simulation failed: " + r.error);
    const EpochMillis end = nowMillis();
    s.truth = readAnomalyLines(readFile(truth.path));
    waitPast(end + 1200); // past every 1 s threshold
    return s;
}

const std::string kShortThresholds =
    "[detect]\nstuck_after = \"1s\"\nreceipt_grace = \"1s\"\ncaller_alert_after = \"1s\"\n" +
    std::string(kSimProbe);

CommandResult scanJson(const std::string& configText) {
    const TempFile config("scan.toml", configText);
    return runCommand(callscopeBinary() + " scan --config " + config.path + " --since 10m --json");
}

// Rebuilds a flat JSON object with renamed fields and rewritten values.
std::string rewrite(const std::string& json, const std::map<std::string, std::string>& names,
                    const std::map<std::string, std::string>& words,
                    const std::set<std::string>& timesToEpoch) {
    simdjson::dom::parser parser;
    simdjson::dom::object obj = parser.parse(json).get_object();
    std::string out = "{";
    for (auto [key, value] : obj) {
        const std::string k(key);
        const std::string name = names.count(k) ? names.at(k) : k;
        out += (out.size() > 1 ? "," : "") + std::string("\"") + name + "\":";
        std::string_view text;
        if (!value.get_string().get(text)) {
            const std::string t(text);
            if (timesToEpoch.count(k))
                out += std::to_string(parseTimestamp(t).value());
            else
                out += "\"" + (words.count(t) ? words.at(t) : t) + "\"";
        } else {
            out += simdjson::to_string(value);
        }
    }
    return out + "}";
}

void copyTopic(const TestStack& s, const std::string& from, const std::string& to,
               const std::map<std::string, std::string>& names,
               const std::map<std::string, std::string>& words,
               const std::set<std::string>& timesToEpoch) {
    std::string err;
    KafkaSettings ks{s.brokers, {}, "murmur2_random"};
    ASSERT_TRUE(ensureTopics(ks, {to}, 4, err)) << err;
    auto producer = KafkaProducer::create(ks, err);
    ASSERT_TRUE(producer) << err;
    for (const auto& m : readWholeTopic(s.brokers, from))
        ASSERT_TRUE(producer->produce(to, m.key, rewrite(m.value, names, words, timesToEpoch), err))
            << err;
    ASSERT_TRUE(producer->flush(30'000));
}

} // namespace

TEST(Scan, ARenamedDeploymentThroughTheMappingFindsTheSameAnomalies) {
    const Simulated sim = simulateAllKinds("renamed");
    const TestStack& s = sim.stack;
    {
        // The same data as another deployment names it: schema-qualified
        // tables, other columns, other status words, an epoch-ms column and a
        // timestamp-without-time-zone column.
        pqxx::connection c(s.dsn);
        pqxx::work w(c);
        w.exec(R"(
CREATE SCHEMA idem;
CREATE TABLE idem.records AS SELECT
  call_id AS cid, request_digest AS req_hash,
  CASE status WHEN 'PROCESSING' THEN 'RUNNING' WHEN 'SUCCESS' THEN 'OK' ELSE 'KO' END AS state,
  first_source AS origin, lock_version AS lockv,
  (extract(epoch from created_at) * 1000)::bigint AS created_ms,
  (updated_at AT TIME ZONE 'UTC') AS updated_utc,
  expire_at AS valid_until
  FROM idempotent_record;
CREATE TABLE idem.attempts AS SELECT
  id AS attempt_no, call_id AS cid, request_digest AS req_hash, source_instance AS caller,
  trace_id AS trace,
  CASE outcome WHEN 'EXECUTED' THEN 'RAN' WHEN 'IN_PROGRESS' THEN 'BUSY'
               WHEN 'REPLAYED' THEN 'CACHED' WHEN 'DIGEST_CONFLICT' THEN 'MISMATCH'
               ELSE 'TAKEN_OVER' END AS result,
  (extract(epoch from arrived_at) * 1000)::bigint AS received_ms,
  finished_at AS done
  FROM idempotent_attempt;
)");
        w.commit();
    }
    const std::string suffix = s.receiptTopic.substr(s.receiptTopic.find('.') + 1);
    copyTopic(s, s.receiptTopic, "rcpt." + suffix,
              {{"callId", "id"},
               {"status", "outcome"},
               {"version", "seq"},
               {"finishedAt", "ts"},
               {"requestDigest", "hash"},
               {"sourceInstance", "server"}},
              {{"SUCCESS", "DONE"}, {"FAILED", "ERROR"}, {"PROCESSING", "PENDING"}},
              {"finishedAt"});
    copyTopic(s, s.callerTopic, "callers." + suffix,
              {{"callId", "call"},
               {"state", "phase"},
               {"at", "time"},
               {"instance", "node"},
               {"bizNo", "order"},
               {"requestDigest", "hash"}},
              {{"INITIATED", "new"},
               {"AWAITING_RESPONSE", "sent"},
               {"TIMEOUT_UNKNOWN", "timeout"},
               {"AWAITING_RECEIPT", "waiting"},
               {"CONFIRMED_SUCCESS", "ok"},
               {"CONFIRMED_FAILED", "failed"},
               {"ESCALATED", "escalated"}},
              {"at"});
    const std::string config =
        "[postgres]\ndsn = \"" + s.dsn +
        "\"\n"
        "[postgres.record]\ntable = \"idem.records\"\ncall_id = \"cid\"\n"
        "request_digest = \"req_hash\"\nstatus = \"state\"\nresult_snapshot = \"\"\n"
        "first_source = \"origin\"\nlock_version = \"lockv\"\ncreated_at = \"created_ms\"\n"
        "updated_at = \"updated_utc\"\nexpire_at = \"valid_until\"\n"
        "[postgres.record.status_values]\nPROCESSING = [\"RUNNING\"]\nSUCCESS = [\"OK\"]\n"
        "FAILED = [\"KO\"]\n"
        "[postgres.attempt]\ntable = \"idem.attempts\"\nid = \"attempt_no\"\ncall_id = \"cid\"\n"
        "request_digest = \"req_hash\"\nsource_instance = \"caller\"\ntrace_id = \"trace\"\n"
        "outcome = \"result\"\narrived_at = \"received_ms\"\nfinished_at = \"done\"\n"
        "[postgres.attempt.outcome_values]\nEXECUTED = [\"RAN\"]\nIN_PROGRESS = [\"BUSY\"]\n"
        "REPLAYED = [\"CACHED\"]\nDIGEST_CONFLICT = [\"MISMATCH\"]\nREOCCUPIED = [\"TAKEN_OVER\"]\n"
        "[kafka]\nbrokers = \"" +
        s.brokers + "\"\nreceipt_topics = \"^rcpt\\\\." + suffix +
        "$\"\ncaller_topics = \"callers." + suffix +
        "\"\n"
        "[kafka.receipt]\ncall_id = \"id\"\nstatus = \"outcome\"\nversion = \"seq\"\n"
        "finished_at = \"ts\"\nrequest_digest = \"hash\"\nsource_instance = \"server\"\n"
        "[kafka.receipt.status_values]\nSUCCESS = [\"DONE\"]\nFAILED = [\"ERROR\"]\n"
        "PROCESSING = [\"PENDING\"]\n"
        "[kafka.caller_event]\ncall_id = \"call\"\nstate = \"phase\"\nat = \"time\"\n"
        "instance = \"node\"\nbiz_no = \"order\"\nrequest_digest = \"hash\"\n"
        "[kafka.caller_event.state_values]\nINITIATED = [\"new\"]\nAWAITING_RESPONSE = [\"sent\"]\n"
        "TIMEOUT_UNKNOWN = [\"timeout\"]\nAWAITING_RECEIPT = [\"waiting\"]\n"
        "CONFIRMED_SUCCESS = [\"ok\"]\nCONFIRMED_FAILED = [\"failed\"]\nESCALATED = "
        "[\"escalated\"]\n" +
        kShortThresholds;
    const CommandResult r = scanJson(config);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find(R"("rejectedMessages":0)"), std::string::npos)
        << r.out.substr(r.out.rfind('\n', r.out.size() - 2));
    const Situations found = readAnomalyLines(r.out);
    EXPECT_EQ(found, sim.truth) << "scan:\n"
                                << describe(found) << "truth:\n"
                                << describe(sim.truth);
}

TEST(Scan, AMappedColumnThatDoesNotExistIsAConfigError) {
    const TestStack s = TestStack::fresh("badmap");
    {
        pqxx::connection c(s.dsn);
        pqxx::work w(c);
        w.exec("CREATE TABLE idempotent_record (call_id text, request_digest text, status text, "
               "first_source text, lock_version int, created_at timestamptz, "
               "updated_at timestamptz, expire_at timestamptz)");
        w.commit();
    }
    const CommandResult r = scanJson("[postgres]\ndsn = \"" + s.dsn +
                                     "\"\n[postgres.record]\nstatus = \"state\"\n"
                                     "[postgres.attempt]\nenabled = false\n[kafka]\nbrokers = \"" +
                                     s.brokers + "\"\n");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("postgres.record.status: column \"state\" not found"), std::string::npos)
        << r.err;
}

TEST(Scan, MalformedMessagesAreCountedPerReasonAndSkipped) {
    const Simulated sim = simulateAllKinds("malformed", 0.05);
    const TestStack& s = sim.stack;
    std::string err;
    auto producer = KafkaProducer::create(
        {s.brokers, {{"message.max.bytes", "4000000"}}, "murmur2_random"}, err);
    ASSERT_TRUE(producer) << err;
    const std::vector<std::string> bad = {
        "this is not json",
        R"({"status":"SUCCESS","version":1})",
        "{\"callId\":\"c\xff\",\"status\":\"SUCCESS\",\"version\":1}",
        R"({"callId":"c","status":"DONE","version":1})",
        R"({"callId":"c","status":"SUCCESS","version":"one"})",
        R"({"callId":"c","status":"SUCCESS","version":1,"pad":")" + std::string(1 << 20, 'x') +
            "\"}"};
    for (const auto& m : bad)
        ASSERT_TRUE(producer->produce(s.receiptTopic, "bad-key", m, err)) << err;
    ASSERT_TRUE(producer->flush(30'000));
    const CommandResult r = scanJson(readFile(s.writeConfig(kShortThresholds)));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* reason :
         {R"("not JSON":1)", R"("missing callId":1)", R"("invalid UTF-8":1)",
          R"("unknown status":1)", R"("wrong type: version":1)", R"("oversized":1)"})
        EXPECT_NE(r.out.find(reason), std::string::npos) << reason;
    EXPECT_NE(r.out.find(R"("rejectedMessages":6)"), std::string::npos);
    EXPECT_NE(r.err.find("rejected and skipped"), std::string::npos) << r.err;
    EXPECT_EQ(readAnomalyLines(r.out), sim.truth); // consumption went on
}

// While a window loads, a batch that begins later than every Kafka partition
// has been read waits until they have (Monitor::applyQueued): here the one
// receipt partition runs up to the partition lead ahead of the four caller
// partitions, the records are read all at once ahead of both, and every
// 40th call's receipts carry a message time minutes behind their neighbours
// (a producer's clock), so a batch that is due can wait behind an earlier one
// of its partition. Every call is healthy and each receipt's second version
// comes after its first: the scan finds nothing, and no receipt is taken
// out of order (a call judged before its rows waiting would be an orphan
// or miss a receipt).
TEST(Scan, BatchesReadAheadWaitAndEveryCallIsJudgedWhole) {
    const TestStack s = TestStack::fresh("held");
    std::string error;
    bool refused = false;
    ASSERT_TRUE(sim::prepareDatabase(s.dsn, s.database, error, refused)) << error;
    constexpr int kCalls = 3000;
    constexpr EpochMillis kStep = 2400; // two hours of calls
    const EpochMillis t0 = nowMillis() - 3 * 3'600'000;
    const auto at = [&](EpochMillis ms) { return std::to_string(ms); };
    {
        pqxx::connection c(s.dsn);
        pqxx::work w(c);
        const std::string start = "(" + at(t0) + " + i * " + at(kStep) + ") / 1000.0";
        w.exec("INSERT INTO idempotent_record (call_id, request_digest, status, first_source, "
               "created_at, updated_at, expire_at) SELECT 'held-' || i, md5(i::text) || "
               "md5(i::text), 'SUCCESS', 'api-1', to_timestamp(" +
               start + "), to_timestamp(" + start + " + 0.02), to_timestamp(" + start +
               " + 86400) FROM generate_series(0, " + std::to_string(kCalls - 1) + ") i");
        w.exec("INSERT INTO idempotent_attempt (call_id, request_digest, source_instance, "
               "trace_id, outcome, arrived_at, finished_at) SELECT 'held-' || i, md5(i::text) "
               "|| md5(i::text), 'api-1', 'trace-' || i, 'EXECUTED', to_timestamp(" +
               start + "), to_timestamp(" + start + " + 0.02) FROM generate_series(0, " +
               std::to_string(kCalls - 1) + ") i");
        w.commit();
    }
    const KafkaSettings ks{s.brokers, {}, s.config.kafka.partitioner};
    ASSERT_TRUE(ensureTopics(ks, {s.receiptTopic}, 1, error)) << error;
    ASSERT_TRUE(ensureTopics(ks, {s.callerTopic}, 4, error)) << error;
    auto producer = KafkaProducer::create(ks, error);
    ASSERT_TRUE(producer) << error;
    for (int i = 0; i < kCalls; ++i) {
        const std::string id = "held-" + std::to_string(i);
        const EpochMillis t = t0 + i * kStep;
        for (const auto& [state, when] :
             {std::pair{"INITIATED", t - 5}, std::pair{"AWAITING_RESPONSE", t - 2},
              std::pair{"CONFIRMED_SUCCESS", t + 25}}) {
            const std::string json = R"({"callId":")" + id + R"(","state":")" + state +
                                     R"(","at":")" + formatIsoMillis(when) +
                                     R"(","instance":"api-1","attempt":1})";
            ASSERT_TRUE(producer->produce(s.callerTopic, id, json, error, when)) << error;
        }
        // Two versions, the second a millisecond later; every 40th call's
        // both stamped six minutes early by the producer (finishedAt is true).
        const EpochMillis stamp = i % 40 == 0 ? t + 20 - 360'000 : t + 20;
        for (int version = 1; version <= 2; ++version) {
            const std::string json = R"({"callId":")" + id + R"(","status":"SUCCESS","version":)" +
                                     std::to_string(version) + R"(,"finishedAt":")" +
                                     formatIsoMillis(t + 20 + version) + R"("})";
            ASSERT_TRUE(producer->produce(s.receiptTopic, id, json, error, stamp + version))
                << error;
        }
    }
    ASSERT_TRUE(producer->flush(30'000));

    // (Final calls may leave while the window loads, 200 at a time at least:
    // whether any do depends on how the readers' batches fall.)
    const TempFile config("held.toml",
                          readFile(s.writeConfig("[retention]\nrelease_batch = 200\n")));
    const CommandResult scan =
        runCommand(callscopeBinary() + " scan --config " + config.path + " --since 1d --json");
    ASSERT_EQ(scan.exitCode, 0) << scan.err;
    const std::size_t lastLine = scan.out.rfind('\n', scan.out.size() - 2);
    const std::string summary =
        lastLine == std::string::npos ? scan.out : scan.out.substr(lastLine + 1);
    EXPECT_NE(summary.find(R"("calls":)" + std::to_string(kCalls) + ","), std::string::npos)
        << summary;
    EXPECT_EQ(scan.out.find(R"("type":"anomaly")"), std::string::npos) << scan.out.substr(0, 4000);
    EXPECT_NE(summary.find(R"("anomalies":{})"), std::string::npos) << summary;
    EXPECT_NE(summary.find(R"("outOfOrderReceipts":0,)"), std::string::npos) << summary;
}

// A finished call is read first around its life (issue 12: a cold drill-down
// in a busy topic reads minutes of one partition, not hours); a receipt that
// came an hour after the record (a relay that was down) is still found,
// because the receipt was missing from those minutes.
TEST(Inspect, AReceiptAnHourAfterItsRecordIsStillRead) {
    const TestStack s = TestStack::fresh("late-receipt");
    std::string error;
    bool refused = false;
    ASSERT_TRUE(sim::prepareDatabase(s.dsn, s.database, error, refused)) << error;
    const EpochMillis t = nowMillis() - 3 * 3'600'000;
    const auto at = [](EpochMillis ms) {
        return "to_timestamp(" + std::to_string(ms / 1000) + ")";
    };
    {
        pqxx::connection c(s.dsn);
        pqxx::work w(c);
        w.exec("INSERT INTO idempotent_record (call_id, request_digest, status, first_source, "
               "created_at, updated_at, expire_at) VALUES ('late-1', repeat('a', 64), 'SUCCESS', "
               "'api-1', " +
               at(t) + ", " + at(t + 2000) + ", " + at(t + 86'400'000) + ")");
        w.exec("INSERT INTO idempotent_record (call_id, request_digest, status, first_source, "
               "created_at, updated_at, expire_at) VALUES ('skew-1', repeat('b', 64), 'SUCCESS', "
               "'api-1', " +
               at(t) + ", " + at(t + 2000) + ", " + at(t + 86'400'000) + ")");
        w.commit();
    }
    const KafkaSettings ks{s.brokers, {}, s.config.kafka.partitioner};
    ASSERT_TRUE(ensureTopics(ks, {s.receiptTopic, s.callerTopic}, 4, error)) << error;
    auto producer = KafkaProducer::create(ks, error);
    ASSERT_TRUE(producer) << error;
    const auto caller = [&](const std::string& id, const char* state, EpochMillis when) {
        const std::string json = R"({"callId":")" + id + R"(","state":")" + state + R"(","at":")" +
                                 formatIsoMillis(when) + R"(","instance":"api-1","attempt":1})";
        ASSERT_TRUE(producer->produce(s.callerTopic, id, json, error, when)) << error;
    };
    const auto receipt = [&](const std::string& id, EpochMillis when) {
        ASSERT_TRUE(producer->produce(
            s.receiptTopic, id, R"({"callId":")" + id + R"(","status":"SUCCESS","version":2})",
            error, when))
            << error;
    };
    caller("late-1", "INITIATED", t - 10);
    caller("late-1", "AWAITING_RESPONSE", t - 5);
    caller("late-1", "CONFIRMED_SUCCESS", t + 2100);
    receipt("late-1", t + 3'600'000);
    // A caller whose clock is three minutes behind: its start lies before
    // the minutes read first, its receipt and its end inside them.
    caller("skew-1", "INITIATED", t - 180'000);
    caller("skew-1", "AWAITING_RESPONSE", t - 179'990);
    caller("skew-1", "CONFIRMED_SUCCESS", t + 2100);
    receipt("skew-1", t + 2100);
    ASSERT_TRUE(producer->flush(10'000));

    const TempFile config("late.toml", readFile(s.writeConfig()));
    for (const std::string id : {"late-1", "skew-1"}) {
        const CommandResult r = runCommand(callscopeBinary() + " inspect " + id + " --config " +
                                           config.path + " --json");
        ASSERT_EQ(r.exitCode, 0) << r.err;
        simdjson::dom::parser parser;
        const simdjson::dom::element doc = parser.parse(r.out);
        std::set<std::string> states;
        for (auto e : doc["timeline"]["events"].get_array())
            states.insert(std::string(std::string_view(e["lane"].get_string())) + " " +
                          std::string(std::string_view(e["state"].get_string())));
        EXPECT_TRUE(states.count("receipt SUCCESS")) << r.out;
        EXPECT_TRUE(states.count("caller INITIATED")) << r.out;
        EXPECT_TRUE(states.count("caller CONFIRMED_SUCCESS")) << r.out;
        EXPECT_EQ(std::int64_t(doc["coldRead"]["messagesMatched"].get_int64()), 4) << r.out;
    }
}

TEST(Inspect, AColdCallIsReadByKeyAndFromOnePartitionPerTopic) {
    const Simulated sim = simulateAllKinds("inspect", 0.06);
    const TestStack& s = sim.stack;
    ASSERT_TRUE(sim.truth.count("key_rotation"));
    const std::string pair = *sim.truth.at("key_rotation").begin();
    // The truth lists them by name; `first` is the one that came first.
    std::string first = pair.substr(0, pair.find(','));
    std::string second = pair.substr(pair.find(',') + 1);

    // Producers used the Java client's murmur2: every message is where
    // partitionForKey says, which is what the cold read relies on.
    const SimData data = loadSimData(s.dsn, s.brokers, s.receiptTopic, s.callerTopic);
    for (const auto& [id, receipts] : data.receipts)
        for (const auto& r : receipts)
            ASSERT_EQ(r.partition, partitionForKey(id, 4, "murmur2_random")) << id;
    ASSERT_TRUE(data.records.count(first) && data.records.count(second)) << pair;
    if (data.records.at(second).createdAt < data.records.at(first).createdAt)
        std::swap(first, second);

    const TempFile config("inspect.toml", readFile(s.writeConfig(kShortThresholds)));
    const CommandResult r = runCommand(callscopeBinary() + " inspect " + second + " --config " +
                                       config.path + " --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(r.out);
    EXPECT_EQ(std::string_view(doc["timeline"]["callId"].get_string()), second);
    EXPECT_EQ(std::string_view(doc["timeline"]["record"]["status"].get_string()), "SUCCESS");
    std::set<std::string> lanes;
    for (auto e : doc["timeline"]["events"].get_array())
        lanes.insert(std::string(std::string_view(e["lane"].get_string())));
    EXPECT_EQ(lanes, (std::set<std::string>{"attempt", "caller", "receipt", "server"}));
    const std::string verdict(std::string_view(doc["diagnosis"]["verdict"].get_string()));
    EXPECT_NE(verdict.find("Key rotated"), std::string::npos) << verdict;
    std::vector<std::string> siblings;
    for (auto v : doc["diagnosis"]["siblingCallIds"].get_array())
        siblings.emplace_back(std::string_view(v.get_string()));
    EXPECT_EQ(siblings, std::vector<std::string>{first});
    // Only the key's partition of each topic was read, not the topics.
    EXPECT_EQ(std::int64_t(doc["coldRead"]["topics"].get_int64()), 2);
    const std::int64_t scanned = doc["coldRead"]["messagesScanned"].get_int64();
    EXPECT_GT(scanned, 0);
    // The call's partition and its sibling's (for the sibling's timeouts): at
    // most two of the four partitions of each topic.
    EXPECT_LT(scanned,
              static_cast<std::int64_t>(data.receiptCount + data.callerEventCount) * 3 / 4);
    EXPECT_GT(std::int64_t(doc["coldRead"]["messagesMatched"].get_int64()), 3);

    const CommandResult text =
        runCommand(callscopeBinary() + " inspect " + second + " --config " + config.path);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("verdict: Key rotated"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("cause: key_rotated_after_timeout"), std::string::npos) << text.out;

    // --group: both callIds on one axis, the first's timeout and both executions.
    const CommandResult group = runCommand(callscopeBinary() + " inspect " + second +
                                           " --group --json --config " + config.path);
    ASSERT_EQ(group.exitCode, 0) << group.err;
    const simdjson::dom::element g = parser.parse(group.out);
    EXPECT_EQ(std::string_view(g["type"].get_string()), "group");
    EXPECT_EQ(std::string_view(g["kind"].get_string()), "key_rotation");
    EXPECT_EQ(std::string_view(g["cause"].get_string()), "key_rotated_after_timeout");
    EXPECT_EQ(std::string_view(g["tie"].get_string()).rfind("same digest ", 0), 0u);
    const simdjson::dom::array members = g["members"].get_array();
    ASSERT_EQ(members.size(), 2u) << group.out;
    EXPECT_EQ(std::string_view(members.at(0)["callId"].get_string()), first);
    EXPECT_EQ(std::string_view(members.at(1)["callId"].get_string()), second);
    EXPECT_EQ(members.at(0)["timeouts"].get_array().size(), 1u) << group.out;
    for (const auto m : members)
        EXPECT_GE(m["executions"].get_array().size(), 1u) << group.out;
    EXPECT_TRUE(members.at(1)["timeline"]["events"].is_array());
    EXPECT_NE(text.out.find("sibling callIds: " + first), std::string::npos) << text.out;

    const CommandResult unknown =
        runCommand(callscopeBinary() + " inspect cid-never-seen --config " + config.path);
    EXPECT_EQ(unknown.exitCode, 1);
    EXPECT_NE(unknown.err.find("nothing is known of callId cid-never-seen"), std::string::npos);
}

// `callscope advise` (issue 14): on traffic whose records expire before their
// retries, it recommends a window longer than the retry tail it measured and
// lists exactly the callIds executed again.
TEST(Advise, RecommendsAWindowLongerThanTheRetryTailAndListsTheCallsAtRisk) {
    Simulated s{TestStack::fresh("advise"), {}};
    SimOptions o;
    o.duration = Millis{3000};
    o.rate = 30;
    o.seed = 11;
    o.faults[AnomalyKind::ExpiredReplay] = 0.15;
    o.receiptTopic = s.stack.receiptTopic;
    o.allowWritesTo = s.stack.database;
    o.callerTopic = s.stack.callerTopic;
    const TempFile truth("advise-truth.jsonl");
    o.truthPath = truth.path;
    const SimResult sim = runSimulation(s.stack.config, o);
    ASSERT_TRUE(sim.ok) << sim.error;
    const Situations t = readAnomalyLines(readFile(truth.path));
    ASSERT_TRUE(t.count("expired_replay"));
    waitPast(nowMillis() + 1200);

    const TempFile config("advise.toml", readFile(s.stack.writeConfig(kShortThresholds)));
    const CommandResult r =
        runCommand(callscopeBinary() + " advise --config " + config.path + " --since 10m --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    simdjson::dom::parser parser;
    const simdjson::dom::element a = parser.parse(r.out);
    EXPECT_EQ(std::string_view(a["type"].get_string()), "advice");
    for (const char* d :
         {"processing", "retryDelay", "receiptDelay", "confirmationDelay", "observedWindow"})
        EXPECT_GT(std::int64_t(a[d]["count"].get_int64()), 0) << d;
    const std::int64_t retryTail = a["retryDelay"]["maxMs"].get_int64();
    EXPECT_GT(retryTail, 1000) << "a late retry comes after the 1 s window";
    EXPECT_GT(std::int64_t(a["recommendedWindowMs"].get_int64()), retryTail);
    EXPECT_GT(std::int64_t(a["recommendedStaleTimeoutMs"].get_int64()),
              std::int64_t(a["processing"]["p999Ms"].get_int64()));
    std::set<std::string> atRisk;
    for (auto id : a["atRisk"].get_array())
        atRisk.insert(std::string(std::string_view(id.get_string())));
    EXPECT_EQ(atRisk, t.at("expired_replay"));
    EXPECT_EQ(std::int64_t(a["expiredReplays"].get_int64()),
              std::int64_t(t.at("expired_replay").size()));

    const CommandResult text =
        runCommand(callscopeBinary() + " advise --config " + config.path + " --since 10m");
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("window >= 2 x max(p99.9 retry delay"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(*t.at("expired_replay").begin()), std::string::npos) << text.out;
}
