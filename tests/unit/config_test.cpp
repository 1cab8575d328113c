#include "connectors/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace callscope;

namespace {

ConfigResult parse(const std::string& text) {
    return parseConfigText(text, "t.toml");
}

std::string firstError(const std::string& text) {
    const ConfigResult r = parse(text);
    return r.errors.empty() ? std::string("(no error)") : r.errors.front().toString();
}

} // namespace

TEST(Config, EmptyFileIsTheReferenceDeployment) {
    const ConfigResult r = parse("");
    ASSERT_TRUE(r.ok());
    const Config& c = r.config;
    EXPECT_EQ(c.postgres.record.table, "idempotent_record");
    EXPECT_EQ(c.postgres.record.firstSource, "first_source");
    EXPECT_EQ(c.postgres.attempt.outcome, "outcome");
    EXPECT_TRUE(c.postgres.attempt.enabled);
    EXPECT_EQ(c.postgres.pollInterval, Millis{1000});
    EXPECT_EQ(c.postgres.statementTimeout, Millis{5000});
    EXPECT_EQ(c.kafka.receiptTopics, "^receipts\\..*");
    EXPECT_EQ(c.kafka.callerTopics, "caller-events");
    EXPECT_EQ(c.kafka.partitioner, "murmur2_random");
    EXPECT_EQ(c.kafka.properties.at("security.protocol"), "PLAINTEXT");
    EXPECT_EQ(c.kafka.receipt.callId, "callId");
    EXPECT_EQ(c.kafka.callerEvent.bizNo, "bizNo");
    EXPECT_EQ(c.detect.stuckAfter, Millis{300'000});
    EXPECT_EQ(c.detect.receiptGrace, Millis{60'000});
    EXPECT_EQ(c.detect.callerAlertAfter, Millis{300'000});
    EXPECT_EQ(c.detect.keyRotationWindow, Millis{7'200'000});
    EXPECT_EQ(c.retention.finishedCalls, Millis{1'800'000});
    EXPECT_EQ(c.retention.maxCalls, 5'000'000);
    EXPECT_EQ(c.retention.maxBytes, std::int64_t{1} << 30);
    EXPECT_EQ(c.retention.maxFieldBytes, 256);
    EXPECT_EQ(c.postgres.clockSkew, Millis{300'000});
    EXPECT_EQ(c.postgres.record.statusValues.at("SUCCESS"), std::vector<std::string>{"SUCCESS"});
    EXPECT_EQ(c.kafka.callerEvent.stateValues.size(), 7u);
    EXPECT_EQ(c.postgres.attempt.outcomeValues.size(), 5u);
}

TEST(Config, TheShippedExampleIsValidAndEqualsTheDefaults) {
    const ConfigResult r = loadConfigFile(CALLSCOPE_SOURCE_DIR "/resources/callscope.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().toString();
    const Config defaults;
    EXPECT_EQ(r.config.postgres.dsn, defaults.postgres.dsn);
    EXPECT_EQ(r.config.kafka.receiptTopics, defaults.kafka.receiptTopics);
    EXPECT_EQ(r.config.postgres.attempt.outcomeValues, defaults.postgres.attempt.outcomeValues);
    EXPECT_EQ(r.config.kafka.callerEvent.stateValues, defaults.kafka.callerEvent.stateValues);
    EXPECT_EQ(r.config.postgres.clockSkew, defaults.postgres.clockSkew);
    EXPECT_EQ(r.config.retention.maxBytes, defaults.retention.maxBytes);
    EXPECT_EQ(r.config.retention.maxFieldBytes, defaults.retention.maxFieldBytes);
}

// An invalid topic pattern is a config error naming the key (it aborted the
// process with std::regex_error when the source started).
TEST(Config, InvalidTopicPatternIsRefusedNamingTheKey) {
    const std::string e = firstError("[kafka]\nreceipt_topics = \"^receipts\\\\.(pay\"\n");
    EXPECT_EQ(
        e.rfind("t.toml:2: kafka.receipt_topics: invalid regular expression \"^receipts\\.(pay\"",
                0),
        0u)
        << e;
    EXPECT_NE(firstError("[kafka]\ncaller_topics = \"^[a-\"\n").find("kafka.caller_topics"),
              std::string::npos);
    EXPECT_TRUE(parse("[kafka]\ncaller_topics = \"(not a pattern: no caret\"\n").ok());
    // Numbers libstdc++'s regex compiler would overflow on (found by fuzz_config).
    EXPECT_NE(firstError("[kafka]\nreceipt_topics = \"^r\\\\2222222222222222222222\"\n")
                  .find("back-references are not supported"),
              std::string::npos);
    EXPECT_NE(firstError("[kafka]\nreceipt_topics = \"^r{99999999999999999999}\"\n")
                  .find("more than 5 digits"),
              std::string::npos);
    EXPECT_TRUE(parse("[kafka]\nreceipt_topics = \"^receipts\\\\.[a-z]{1,20}$\"\n").ok());
}

TEST(Config, AMemoryBudgetTooSmallToHoldAnythingIsRefused) {
    EXPECT_EQ(firstError("[store]\nmax_bytes = 65536\n"),
              "t.toml:2: store.max_bytes: must be at least 16 MiB (16777216)");
    EXPECT_TRUE(parse("[store]\nmax_bytes = 16777216\n").ok());
}

TEST(Config, ARenamedDeploymentMapsOnlyWhatDiffers) {
    const ConfigResult r = parse(R"(
[postgres.record]
table = "idem.records"
call_id = "cid"
first_source = ""
[postgres.record.status_values]
SUCCESS = ["OK", "DONE"]
[postgres.attempt]
enabled = false
[kafka]
caller_topics = ""
[kafka.properties]
"security.protocol" = "SASL_SSL"
"socket.timeout.ms" = 30000
"enable.ssl.certificate.verification" = false
[kafka.receipt]
call_id = "id"
)");
    ASSERT_TRUE(r.ok()) << r.errors.front().toString();
    EXPECT_EQ(r.config.postgres.record.table, "idem.records");
    EXPECT_EQ(r.config.postgres.record.callId, "cid");
    EXPECT_EQ(r.config.postgres.record.firstSource, "");
    EXPECT_EQ(r.config.postgres.record.status, "status");
    EXPECT_EQ(r.config.postgres.record.statusValues.at("SUCCESS"),
              (std::vector<std::string>{"OK", "DONE"}));
    EXPECT_EQ(r.config.postgres.record.statusValues.at("FAILED"),
              std::vector<std::string>{"FAILED"});
    EXPECT_FALSE(r.config.postgres.attempt.enabled);
    EXPECT_EQ(r.config.kafka.callerTopics, "");
    EXPECT_EQ(r.config.kafka.properties.at("security.protocol"), "SASL_SSL");
    EXPECT_EQ(r.config.kafka.properties.at("socket.timeout.ms"), "30000");
    EXPECT_EQ(r.config.kafka.properties.at("enable.ssl.certificate.verification"), "false");
    EXPECT_EQ(r.config.kafka.receipt.callId, "id");
}

TEST(Config, UnknownKeysAreRefusedWithLineAndKey) {
    EXPECT_EQ(firstError("[postgres]\ndsn = \"host=x\"\npoll_intervall = \"1s\"\n"),
              "t.toml:3: postgres.poll_intervall: unknown key");
    EXPECT_EQ(firstError("\n[kafak]\nbrokers = \"x\"\n"), "t.toml:2: kafak: unknown key");
    EXPECT_EQ(firstError("[postgres.record]\n\ncolumn = \"x\"\n"),
              "t.toml:3: postgres.record.column: unknown key");
    EXPECT_EQ(firstError("[kafka.caller_event.state_values]\nDONE = [\"D\"]\n"),
              "t.toml:2: kafka.caller_event.state_values.DONE: unknown canonical word (expected "
              "one of INITIATED, AWAITING_RESPONSE, TIMEOUT_UNKNOWN, AWAITING_RECEIPT, "
              "CONFIRMED_SUCCESS, CONFIRMED_FAILED, ESCALATED)");
    EXPECT_EQ(firstError("verbose = true\n"), "t.toml:1: verbose: unknown key");
}

TEST(Config, WrongTypesAreRefused) {
    EXPECT_EQ(firstError("[postgres]\ndsn = 5\n"), "t.toml:2: postgres.dsn: expected a string");
    EXPECT_EQ(firstError("[postgres.attempt]\nenabled = \"yes\"\n"),
              "t.toml:2: postgres.attempt.enabled: expected true or false");
    EXPECT_EQ(firstError("[retention]\nmax_calls = \"many\"\n"),
              "t.toml:2: retention.max_calls: expected an integer");
    EXPECT_EQ(firstError("[retention]\nmax_calls = 0\n"),
              "t.toml:2: retention.max_calls: must be greater than zero");
    EXPECT_EQ(firstError("postgres = \"x\"\n"), "t.toml:1: postgres: expected a table");
    EXPECT_EQ(firstError("[postgres.record.status_values]\nSUCCESS = \"OK\"\n"),
              "t.toml:2: postgres.record.status_values.SUCCESS: expected a non-empty array of "
              "non-empty strings");
    EXPECT_EQ(firstError("[postgres.record.status_values]\nSUCCESS = []\n"),
              "t.toml:2: postgres.record.status_values.SUCCESS: expected a non-empty array of "
              "non-empty strings");
    EXPECT_EQ(firstError("[postgres.record]\ntable = \"\"\n"),
              "t.toml:2: postgres.record.table: must not be empty");
}

TEST(Config, BadDurationsAreRefused) {
    EXPECT_EQ(firstError("[detect]\nstuck_after = \"5 minutes\"\n"),
              "t.toml:2: detect.stuck_after: expected a duration such as \"500ms\", \"30s\", "
              "\"5m\", \"2h\" or \"7d\", got \"5 minutes\"");
    EXPECT_EQ(firstError("[postgres]\npoll_interval = 1\n"),
              "t.toml:2: postgres.poll_interval: expected a duration such as \"500ms\", \"30s\", "
              "\"5m\", \"2h\" or \"7d\"");
}

TEST(Config, ContradictionsAndBadValuesAreRefused) {
    EXPECT_EQ(
        firstError("[postgres.record.status_values]\nSUCCESS = [\"OK\"]\nFAILED = [\"OK\"]\n"),
        "t.toml:3: postgres.record.status_values.FAILED: \"OK\" is already a word for SUCCESS");
    EXPECT_EQ(firstError("[kafka]\npartitioner = \"round_robin\"\n"),
              "t.toml:2: kafka.partitioner: unknown partitioner \"round_robin\" (expected "
              "murmur2_random, murmur2, consistent_random, consistent, fnv1a, fnv1a_random or "
              "random)");
}

TEST(Config, TheProbeIsReadAndABadOneIsRefusedNamingTheKey) {
    const ConfigResult r = parse("[probe]\nsql = \"SELECT 1 FROM orders WHERE order_no = $1\"\n"
                                 "key = \"callId\"\ndelay = \"10s\"\nrate = 0.25\n"
                                 "max_per_second = 7\nstatement_timeout = \"2s\"\n");
    ASSERT_TRUE(r.ok()) << r.errors.front().toString();
    EXPECT_TRUE(r.config.probe.enabled());
    EXPECT_EQ(r.config.probe.key, "callId");
    EXPECT_EQ(r.config.probe.delay, Millis{10'000});
    EXPECT_EQ(r.config.probe.rate, 0.25);
    EXPECT_EQ(r.config.probe.maxPerSecond, 7);
    EXPECT_EQ(r.config.probe.statementTimeout, Millis{2'000});
    EXPECT_FALSE(parse("").config.probe.enabled());
    EXPECT_TRUE(parse("[probe]\nrate = 1\n").ok());

    EXPECT_EQ(firstError("[probe]\nsql = \"SELECT 1 FROM orders\"\n"),
              "t.toml:2: probe.sql: must use $1 for the key (e.g. \"SELECT 1 FROM orders WHERE "
              "order_no = $1\")");
    EXPECT_EQ(firstError("[probe]\nkey = \"order_no\"\n"),
              "t.toml:2: probe.key: expected one of \"bizNo\", \"callId\"");
    EXPECT_EQ(firstError("[probe]\nrate = 1.5\n"),
              "t.toml:2: probe.rate: expected a number from 0 to 1");
    EXPECT_EQ(firstError("[probe]\nmax_per_second = 0\n").find("probe.max_per_second"), 10u);
    EXPECT_EQ(firstError("[postgres]\nenabled = false\n[kafka]\ncaller_topics = \"c\"\n[probe]\n"
                         "sql = \"SELECT 1 FROM o WHERE k = $1\"\n"),
              "t.toml:6: probe.sql: the probe runs on PostgreSQL, which is disabled");
}

TEST(Config, InvalidTomlIsRefusedWithItsLine) {
    const std::string e = firstError("[postgres]\ndsn = \"unterminated\n");
    EXPECT_EQ(e.rfind("t.toml:2: not valid TOML: ", 0), 0u) << e;
}

TEST(Config, EveryErrorIsReportedNotJustTheFirst) {
    const ConfigResult r = parse("a = 1\n[detect]\nstuck_after = \"x\"\nb = 2\n");
    ASSERT_EQ(r.errors.size(), 3u);
}

TEST(Config, MissingFileIsAnError) {
    const ConfigResult r = loadConfigFile("/nonexistent/callscope.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.errors.front().toString(),
              "/nonexistent/callscope.toml: cannot read the config file");
}

// Every source is optional, but something must be read.
TEST(Config, EachSourceIsOptionalButNotAllOfThem) {
    const ConfigResult kafkaOnly = parse("[postgres]\nenabled = false\n");
    ASSERT_TRUE(kafkaOnly.ok());
    EXPECT_FALSE(kafkaOnly.config.readsPostgres());
    EXPECT_FALSE(kafkaOnly.config.readsAttempts()) << "the attempt log lives in PostgreSQL";
    EXPECT_TRUE(kafkaOnly.config.readsKafka());
    const ConfigResult pgOnly = parse("[kafka]\nreceipt_topics = \"\"\ncaller_topics = \"\"\n");
    ASSERT_TRUE(pgOnly.ok());
    EXPECT_TRUE(pgOnly.config.readsPostgres());
    EXPECT_FALSE(pgOnly.config.readsKafka());
    EXPECT_EQ(firstError("[postgres]\nenabled = false\n[kafka]\nreceipt_topics = \"\"\n"
                         "caller_topics = \"\"\n"),
              "t.toml:2: postgres.enabled: nothing to read: PostgreSQL is disabled and "
              "kafka.receipt_topics and kafka.caller_topics are both empty");
    EXPECT_EQ(firstError("[postgres]\nenabled = \"no\"\n"),
              "t.toml:2: postgres.enabled: expected true or false");
}

// The example adapters of resources/examples/ are valid configs and read
// PostgreSQL only, through their views.
TEST(Config, TheExampleAdaptersAreValid) {
    for (const char* name : {"stripe", "powertools"}) {
        SCOPED_TRACE(name);
        const ConfigResult r = loadConfigFile(std::string(CALLSCOPE_SOURCE_DIR) +
                                              "/resources/examples/" + name + "/callscope.toml");
        ASSERT_TRUE(r.ok()) << r.errors.front().toString();
        EXPECT_EQ(r.config.postgres.record.table, "callscope_idempotent_record");
        EXPECT_FALSE(r.config.readsAttempts());
        EXPECT_FALSE(r.config.readsKafka());
    }
}
