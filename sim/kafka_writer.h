#pragma once
// The simulator's side of Kafka, over librdkafka's C API: a producer, topic
// creation, and a reader of whole topics (the simulated callers' receipts;
// tests read what the simulator wrote with it). callscope itself only reads,
// through connectors/kafka_client and connectors/kafka_source.
#include "connectors/kafka_client.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct rd_kafka_s;

namespace callscope {

class KafkaProducer {
public:
    static std::unique_ptr<KafkaProducer> create(const KafkaSettings& settings, std::string& error);
    ~KafkaProducer();
    KafkaProducer(const KafkaProducer&) = delete;
    KafkaProducer& operator=(const KafkaProducer&) = delete;

    // Queues one message (copied). Blocks briefly while the local queue is full.
    // A timestamp of 0 is the producer's clock; bulk fills give their own.
    bool produce(const std::string& topic, std::string_view key, std::string_view value,
                 std::string& error, std::int64_t timestampMs = 0);
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

// Assigns partitions by hand: no consumer group is joined and no offset is
// ever committed (SPEC §8).
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
    // The end offset (high watermark) now of each partition holding
    // messages; false with the error.
    bool endOffsets(const std::string& topic, std::map<std::int32_t, std::int64_t>& ends,
                    std::string& error);

private:
    explicit KafkaPartitionReader(rd_kafka_s* rk);
    rd_kafka_s* m_rk;
};

} // namespace callscope
