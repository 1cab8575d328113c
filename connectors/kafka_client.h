#pragma once
// Read-side helpers over librdkafka's C API: configuration, a consumer that
// assigns partitions by hand — no consumer group is joined and no offset is
// ever committed (SPEC §8) — and the partition a key is produced to. The
// simulator's producer and topic creation live in sim/kafka_writer.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

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

} // namespace callscope
