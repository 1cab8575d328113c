#pragma once
// Everything the simulator wrote, read back with SQL and a Kafka consumer,
// and a literal reading of SPEC §3's situations over it. This is the tests'
// independent check of the simulator: what the data holds, not what the
// simulator says it did.
#include "sim/kafka_writer.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace callscope::test {

struct RecordRow {
    std::string callId, digest, status, firstSource;
    int lockVersion = 0;
    std::int64_t createdAt = 0, updatedAt = 0, expireAt = 0;
};

struct AttemptRow {
    std::int64_t id = 0;
    std::string callId, digest, source, outcome, traceId;
    std::int64_t arrivedAt = 0;
    std::optional<std::int64_t> finishedAt;
};

struct ReceiptMsg {
    std::string callId, status, digest, source;
    std::int64_t version = 0;
    int partition = 0;
};

struct CallerEventMsg {
    std::string callId, state, instance, bizNo, digest, traceId;
    std::int64_t attempt = 0;
    std::int64_t at = 0;
};

struct SimData {
    std::map<std::string, RecordRow> records;
    std::map<std::string, std::vector<AttemptRow>> attempts;         // by arrival
    std::map<std::string, std::vector<ReceiptMsg>> receipts;         // in topic order
    std::map<std::string, std::vector<CallerEventMsg>> callerEvents; // in topic order
    std::set<std::string> businessRows; // callscope_sim_orders.order_no (the business effect)
    std::size_t receiptCount = 0, callerEventCount = 0;
};

SimData loadSimData(const std::string& dsn, const std::string& brokers,
                    const std::string& receiptTopic, const std::string& callerTopic);

// Every message of a topic, up to each partition's end when asked (throws
// when that end is not reached in 120 s).
std::vector<KafkaMessage> readWholeTopic(const std::string& brokers, const std::string& topic);

// kind -> the set of situations, each a sorted, comma-joined list of callIds.
// Kinds that carry a cause are keyed "kind/cause" ("key_rotation/callid_regenerated").
using Situations = std::map<std::string, std::set<std::string>>;
Situations findSituations(const SimData& data);

// The same shape from a truth file (or a scan's output): JSON lines of
// anomalies, keyed by kind alone or (withCauses) as findSituations keys them.
Situations readAnomalyLines(const std::string& jsonLines, bool withCauses = false);
// Keyed by kind alone.
Situations withoutCauses(const Situations& s);

std::string describe(const Situations& s);

} // namespace callscope::test
