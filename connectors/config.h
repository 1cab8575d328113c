#pragma once
// The configuration file of SPEC §5. Every mapping key defaults to the
// reference deployment of SPEC §1, so a file needs only what differs.
#include "models/duration.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace callscope {

// canonical word -> the user's words for it, e.g. SUCCESS -> {"OK", "DONE"}
using ValueWords = std::map<std::string, std::vector<std::string>>;

struct RecordMapping {
    std::string table = "idempotent_record";
    std::string callId = "call_id";
    std::string requestDigest = "request_digest";
    std::string status = "status";
    std::string resultSnapshot = "result_snapshot";
    std::string firstSource = "first_source"; // "" when the table has none
    std::string lockVersion = "lock_version"; // "" likewise
    std::string createdAt = "created_at";
    std::string updatedAt = "updated_at";
    std::string expireAt = "expire_at";
    ValueWords statusValues;
};

struct AttemptMapping {
    bool enabled = true;
    std::string table = "idempotent_attempt";
    std::string id = "id";
    std::string callId = "call_id";
    std::string requestDigest = "request_digest";
    std::string sourceInstance = "source_instance";
    std::string traceId = "trace_id";
    std::string outcome = "outcome";
    std::string arrivedAt = "arrived_at";
    std::string finishedAt = "finished_at";
    ValueWords outcomeValues;
};

struct PostgresConfig {
    bool enabled = true; // false: a Kafka-only deployment (no record, no attempt log)
    std::string dsn = "host=127.0.0.1 port=5432 dbname=orders user=callscope_ro";
    Millis pollInterval{1000};
    Millis statementTimeout{5000};
    // How late a row may become visible relative to its updated_at (a writer
    // whose clock runs behind the database's, a long transaction): the record
    // feed re-reads this far back every 30 s. Rows stamped ahead of the
    // database's clock never move the feed's cursor past its now().
    Millis clockSkew{5 * 60'000};
    // A live source that delivers nothing for this long is shown as quiet
    // (traffic stopped, or a writer did), not as healthy and up to date.
    Millis quietAfter{2 * 60'000};
    RecordMapping record;
    AttemptMapping attempt;
};

struct ReceiptMapping {
    std::string callId = "callId";
    std::string status = "status";
    std::string resultRef = "resultRef";
    std::string finishedAt = "finishedAt";
    std::string version = "version";
    std::string sourceInstance = "sourceInstance";
    std::string requestDigest = "requestDigest";
    ValueWords statusValues;
};

struct CallerEventMapping {
    std::string callId = "callId";
    std::string state = "state";
    std::string at = "at";
    std::string instance = "instance";
    std::string attempt = "attempt";
    std::string bizNo = "bizNo";
    std::string requestDigest = "requestDigest";
    std::string traceId = "traceId";
    ValueWords stateValues;
};

struct KafkaConfig {
    std::string brokers = "127.0.0.1:9092";
    std::string receiptTopics = "^receipts\\..*"; // leading ^: a regex, else a topic name
    std::string callerTopics = "caller-events";   // "" when callers publish no events
    std::string partitioner = "murmur2_random";
    std::map<std::string, std::string> properties{{"security.protocol", "PLAINTEXT"}};
    Millis quietAfter{2 * 60'000}; // as [postgres] quiet_after, for the topics
    ReceiptMapping receipt;
    CallerEventMapping callerEvent;
};

struct DetectConfig {
    Millis stuckAfter{5 * 60'000};
    Millis receiptGrace{60'000};
    Millis callerAlertAfter{5 * 60'000};
    Millis keyRotationWindow{2 * 3'600'000};
};

struct RetentionConfig {
    Millis finishedCalls{30 * 60'000};
    std::int64_t maxCalls = 5'000'000;
    // While a window loads, final calls leave memory in batches of at least
    // this many (or half the store), so the store is compacted rarely.
    std::int64_t releaseBatch = 20'000;
    std::int64_t maxBytes = std::int64_t{1} << 30; // the store's memory budget
    std::int64_t maxFieldBytes = 256;              // longer callIds, instances, bizNos are rejected
};

// The optional business-effect probe (SPEC §5 [probe], effect_missing): a
// read-only query the deployment supplies, run `delay` after a record turns
// SUCCESS on its own connection; no row means the business write is missing.
struct ProbeConfig {
    std::string sql;           // "" = no probe; "$1" is the key
    std::string key = "bizNo"; // or "callId": what $1 is
    Millis delay{30'000};
    double rate = 1.0; // share of SUCCESS records probed (by callId, the same each run)
    std::int64_t maxPerSecond = 50;
    Millis statementTimeout{0}; // 0: [postgres] statement_timeout
    bool enabled() const { return !sql.empty(); }
};

// Why a topic pattern (receipt_topics / caller_topics with a leading ^) is
// refused, or "" when it compiles. Back-references and repetition counts of
// more than 5 digits are refused before std::regex sees them: libstdc++'s
// regex compiler overflows a long on such numbers (found by fuzz_config).
std::string topicPatternProblem(const std::string& pattern);

struct Config {
    PostgresConfig postgres;
    KafkaConfig kafka;
    DetectConfig detect;
    RetentionConfig retention;
    ProbeConfig probe;
    std::string sourcePath; // "" when built-in defaults only

    Config(); // fills every status/outcome/state word list with the canonical words

    // Which sources this deployment reads (SPEC §3 "needs"): the record and
    // attempt log when PostgreSQL is enabled, Kafka when a topic is named.
    bool readsPostgres() const { return postgres.enabled; }
    bool readsAttempts() const { return postgres.enabled && postgres.attempt.enabled; }
    bool readsReceipts() const { return !kafka.receiptTopics.empty(); }
    bool readsCallerEvents() const { return !kafka.callerTopics.empty(); }
    bool readsKafka() const { return readsReceipts() || readsCallerEvents(); }
};

struct ConfigError {
    std::string file;
    int line = 0; // 0 when the error is not tied to a line
    std::string key;
    std::string message;
    std::string toString() const; // "file:line: key: message"
};

struct ConfigResult {
    Config config;
    std::vector<ConfigError> errors; // empty on success
    bool ok() const { return errors.empty(); }
};

ConfigResult loadConfigFile(const std::string& path);
ConfigResult parseConfigText(std::string_view text, const std::string& pathForMessages);

// The config path used when --config is not given:
// $XDG_CONFIG_HOME/callscope/callscope.toml (or ~/.config/...).
std::string defaultConfigPath();

} // namespace callscope
