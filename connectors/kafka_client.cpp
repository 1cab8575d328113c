#include "connectors/kafka_client.h"

#include "connectors/secrets.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <unistd.h>

namespace callscope {

rd_kafka_conf_t* makeKafkaConf(const KafkaSettings& s, std::string& error) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[512];
    auto set = [&](const std::string& k, const std::string& v) {
        if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
            // librdkafka's message can quote the value: not when it is a secret.
            error = "kafka property " + k + ": " +
                    (isSecretProperty(k) ? std::string("refused by librdkafka (the value is not "
                                                       "shown: it holds a secret)")
                                         : std::string(err));
            return false;
        }
        return true;
    };
    // librdkafka's own log lines would interleave with callscope's output (and
    // can quote configuration): none is printed. Connection trouble reaches the
    // user through error callbacks as health, scrubbed of secret values.
    rd_kafka_conf_set_log_cb(conf, nullptr);
    if (!set("bootstrap.servers", s.brokers)) {
        rd_kafka_conf_destroy(conf);
        return nullptr;
    }
    for (const auto& [k, v] : s.properties) {
        if (!set(k, v)) {
            rd_kafka_conf_destroy(conf);
            return nullptr;
        }
    }
    return conf;
}

bool closeConsumer(rd_kafka_t* consumer, int waitMs, std::shared_ptr<void> keepAlive) {
    if (!consumer)
        return true;
    struct State {
        std::mutex mutex;
        std::condition_variable done;
        bool finished = false;
    };
    auto state = std::make_shared<State>();
    std::thread([consumer, state, keepAlive = std::move(keepAlive)] {
        rd_kafka_consumer_close(consumer);
        rd_kafka_destroy(consumer);
        std::lock_guard lock(state->mutex);
        state->finished = true;
        state->done.notify_all();
    }).detach();
    std::unique_lock lock(state->mutex);
    return state->done.wait_for(lock, std::chrono::milliseconds(waitMs),
                                [&] { return state->finished; });
}

rd_kafka_t* makeManualConsumer(const KafkaSettings& s, std::string& error, rd_kafka_conf_t* conf) {
    if (!conf)
        conf = makeKafkaConf(s, error);
    if (!conf)
        return nullptr;
    char err[512];
    // Manual assignment only; offsets are never committed or stored. librdkafka
    // wants a group id even for assign(); a private one never joins or commits,
    // so no production group is disturbed whatever the user's properties say.
    static std::atomic<int> counter{0};
    const std::string privateGroup = "callscope-private-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(counter.fetch_add(1));
    rd_kafka_conf_set(conf, "group.id", privateGroup.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.offset.store", "false", err, sizeof err);
    rd_kafka_conf_set(conf, "fetch.wait.max.ms", "100", err, sizeof err);
    // Come back quickly after a broker restart, unless the user said otherwise.
    if (!s.properties.count("reconnect.backoff.max.ms"))
        rd_kafka_conf_set(conf, "reconnect.backoff.max.ms", "2000", err, sizeof err);
    // Bulk reads: larger fetches, fewer round trips, and a fetch queue bounded
    // by bytes (queued.max.messages.kbytes), not by a message count. When no
    // partition of a broker can be fetched (every queue full) librdkafka 2.0
    // waits up to a second before it looks again, so a small queue shared by
    // all partitions stalls a fast reader. A window's read uses a consumer of
    // its own with a queue per partition (see KafkaSource::loadWindow): the
    // partition it waits for is drained, so it can always be fetched.
    if (!s.properties.count("queued.min.messages"))
        rd_kafka_conf_set(conf, "queued.min.messages", "1000000", err, sizeof err);
    if (!s.properties.count("max.partition.fetch.bytes"))
        rd_kafka_conf_set(conf, "max.partition.fetch.bytes", "4194304", err, sizeof err);
    if (!s.properties.count("topic.metadata.refresh.interval.ms"))
        rd_kafka_conf_set(conf, "topic.metadata.refresh.interval.ms", "30000", err, sizeof err);
    // The end of a partition is an event, not offset + 1 == high watermark:
    // transaction commit markers take offsets no message is delivered for
    // (read_committed, librdkafka's default isolation), so the log end moves
    // past the last message and a reader waiting for it would wait forever.
    rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
    // An offset deleted by retention before it was read is an error event the
    // reader turns into a reported gap, never a silent jump to the end.
    rd_kafka_conf_set(conf, "auto.offset.reset", "error", err, sizeof err);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!rk) {
        error = "kafka consumer: " + std::string(err);
        return nullptr;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

namespace {

std::uint32_t murmur2(std::string_view key) {
    // Kafka's Java client (Utils.murmur2), which librdkafka's murmur2 matches.
    const auto* data = reinterpret_cast<const unsigned char*>(key.data());
    const auto length = static_cast<std::uint32_t>(key.size());
    const std::uint32_t m = 0x5bd1e995;
    std::uint32_t h = 0x9747b28c ^ length;
    const std::uint32_t length4 = length / 4;
    for (std::uint32_t i = 0; i < length4; ++i) {
        const std::uint32_t i4 = i * 4;
        std::uint32_t k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) |
                          (std::uint32_t(data[i4 + 3]) << 24);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    const std::uint32_t tail = length & ~3u;
    switch (length % 4) {
    case 3:
        h ^= std::uint32_t(data[tail + 2]) << 16;
        [[fallthrough]];
    case 2:
        h ^= std::uint32_t(data[tail + 1]) << 8;
        [[fallthrough]];
    case 1:
        h ^= data[tail];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

std::uint32_t crc32(std::string_view key) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (const unsigned char b : key) {
        c ^= b;
        for (int k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

std::uint32_t fnv1a(std::string_view key) {
    std::uint32_t h = 0x811C9DC5u;
    for (const unsigned char b : key) {
        h ^= b;
        h *= 0x01000193u;
    }
    return h;
}

} // namespace

std::int32_t partitionForKey(std::string_view key, std::int32_t partitions,
                             const std::string& partitioner) {
    if (partitions <= 0)
        return -1;
    const auto n = static_cast<std::uint32_t>(partitions);
    if (partitioner == "murmur2" || partitioner == "murmur2_random")
        return static_cast<std::int32_t>((murmur2(key) & 0x7fffffff) % n);
    if (partitioner == "consistent" || partitioner == "consistent_random")
        return static_cast<std::int32_t>(crc32(key) % n);
    if (partitioner == "fnv1a" || partitioner == "fnv1a_random")
        return static_cast<std::int32_t>(fnv1a(key) % n);
    return -1;
}

} // namespace callscope
