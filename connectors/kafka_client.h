#pragma once
// Thin RAII wrappers over librdkafka's C API: a producer (for the simulator),
// topic creation, and a reader that assigns partitions by hand — no consumer
// group is joined and no offset is ever committed (SPEC §8).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct rd_kafka_s;
struct rd_kafka_conf_s;

namespace callscope {

struct KafkaSettings {
    std::string brokers;
    std::map<std::string, std::string> properties; // passed unchanged
    std::string partitioner = "murmur2_random";
};

// A librdkafka configuration with bootstrap.servers and the user's
// properties; nullptr (and `error`) when a property is refused.
rd_kafka_conf_s* makeKafkaConf(const KafkaSettings& settings, std::string& error);

// A consumer that only ever assigns partitions by hand: a private group id,
// offsets never committed or stored.
rd_kafka_s* makeManualConsumer(const KafkaSettings& settings, std::string& error,
                               rd_kafka_conf_s* conf = nullptr);

// Closes and destroys a manual consumer, waiting at most `waitMs`. librdkafka
// 2.0 can hang for ever in rd_kafka_destroy (a broker reference leaked after
// a topic was deleted while assigned, librdkafka #3007/#3796): then the
// handle is left to the process's end instead of hanging the caller.
// Returns false when it was left. `keepAlive` (what the consumer's callbacks
// point at) lives until the handle is destroyed, however late that is.
bool closeConsumer(rd_kafka_s* consumer, int waitMs = 5000,
                   std::shared_ptr<void> keepAlive = nullptr);

// The partition a producer's partitioner sends `key` to (SPEC §4.3):
// murmur2 / murmur2_random as the Java client, consistent(_random) = CRC-32,
// fnv1a(_random) = FNV-1a; -1 for random.
std::int32_t partitionForKey(std::string_view key, std::int32_t partitions,
                             const std::string& partitioner);

class KafkaProducer {
public:
    static std::unique_ptr<KafkaProducer> create(const KafkaSettings& settings, std::string& error);
    ~KafkaProducer();
    KafkaProducer(const KafkaProducer&) = delete;
    KafkaProducer& operator=(const KafkaProducer&) = delete;

    // Queues one message (copied). Blocks briefly while the local queue is full.
    bool produce(const std::string& topic, std::string_view key, std::string_view value,
                 std::string& error);
    // Waits for every queued message; false when some are still in flight.
    bool flush(int timeoutMs);
    std::int64_t deliveryFailures() const;

private:
    explicit KafkaProducer(rd_kafka_s* rk);
    rd_kafka_s* m_rk;
};

// Creates the topics that do not exist yet (others are left as they are and,
// when `existed` is given, named there).
bool ensureTopics(const KafkaSettings& settings, const std::vector<std::string>& topics,
                  int partitions, std::string& error, std::vector<std::string>* existed = nullptr);

struct KafkaMessage {
    std::string topic;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
    std::int64_t timestampMs = -1; // broker/producer timestamp, -1 when absent
    std::string key;
    std::string value;
};

class KafkaPartitionReader {
public:
    static std::unique_ptr<KafkaPartitionReader> create(const KafkaSettings& settings,
                                                        std::string& error);
    ~KafkaPartitionReader();
    KafkaPartitionReader(const KafkaPartitionReader&) = delete;
    KafkaPartitionReader& operator=(const KafkaPartitionReader&) = delete;

    // Assigns every partition of the topic, each at its current end offset
    // (fromEnd) or its beginning.
    bool assignWholeTopic(const std::string& topic, bool fromEnd, std::string& error);
    // Up to maxMessages messages, waiting at most timeoutMs for the first.
    std::vector<KafkaMessage> poll(int timeoutMs, std::size_t maxMessages = 1000);

private:
    explicit KafkaPartitionReader(rd_kafka_s* rk);
    rd_kafka_s* m_rk;
};

} // namespace callscope
