#include "connectors/kafka_source.h"

#include "connectors/kafka_client.h"
#include "connectors/message_decoder.h"
#include "connectors/secrets.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

namespace callscope {
namespace {

enum class Role { Receipt, Caller };

struct TopicInfo {
    Role role;
    int partitions = 0;
};

// Matches a config topic spec: a leading ^ makes it a regex, else a name.
class TopicSpec {
public:
    explicit TopicSpec(const std::string& spec) : m_spec(spec) {
        if (!spec.empty() && spec.front() == '^') {
            if (const std::string why = topicPatternProblem(spec); !why.empty())
                throw SourceError("topic pattern \"" + spec + "\": " + why, true);
            m_regex.emplace(spec, std::regex::ECMAScript);
        }
    }
    bool matches(const std::string& topic) const {
        if (m_spec.empty())
            return false;
        if (m_regex)
            return std::regex_search(topic, *m_regex);
        return topic == m_spec;
    }

private:
    std::string m_spec;
    std::optional<std::regex> m_regex;
};

// Messages per batch handed to the model: a batch is decoded, packed and
// unpacked while its observations are still in the core's cache (10,000 a
// batch spilled them: a 5M-call scan spent ~1 CPU-s more; 1,000 to 2,000
// measure alike).
constexpr std::size_t kBatchMessages = 2'000;

const std::atomic<bool> kNever{false};

struct PartitionKey {
    std::string topic;
    std::int32_t partition;
    bool operator<(const PartitionKey& o) const {
        return std::tie(topic, partition) < std::tie(o.topic, o.partition);
    }
};

// What to do about an authentication failure that is not the user's fault:
// librdkafka before 2.6.1 repeats the client nonce in SCRAM's final message,
// which Kafka 4 brokers refuse (librdkafka#4895); Debian 12 ships 2.0.2.
std::string kafkaAuthHint(const std::string& mechanism) {
    if (mechanism.rfind("SCRAM", 0) != 0 || rd_kafka_version() >= 0x020601ff)
        return {};
    return std::string(" (if the credentials are right: librdkafka ") + rd_kafka_version_str() +
           " cannot complete SCRAM with Kafka 4 brokers, which check the nonce strictly; it "
           "needs librdkafka 2.6.1 or later (librdkafka#4895). PLAIN over SASL_SSL works.)";
}

// What librdkafka's callbacks report, from its own threads. It is shared with
// every consumer it is the opaque of: a consumer whose close times out goes on
// in the background (closeConsumer) and may still call back after the source
// is gone, so the consumer keeps this alive until it is destroyed.
struct KafkaErrors {
    std::mutex mutex;
    std::string lastError;
    std::string refusedBy; // an authentication or certificate failure: retrying will not mend it
    bool brokersDown = false;
    int outages = 0;                  // transport failures seen, so even a short outage is reported
    std::vector<std::string> secrets; // values of secret properties, scrubbed from every text
    std::string mechanism;            // sasl.mechanisms, for the SCRAM hint

    std::string refusal() {
        std::lock_guard lock(mutex);
        return refusedBy;
    }

    static void onError(rd_kafka_t*, int err, const char* reason, void* opaque) {
        auto* self = static_cast<KafkaErrors*>(opaque);
        std::lock_guard lock(self->mutex);
        self->lastError = scrubSecrets(
            std::string("Kafka: ") + rd_kafka_err2str(rd_kafka_resp_err_t(err)) + ": " + reason,
            self->secrets);
        if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION)
            self->refusedBy = self->lastError + kafkaAuthHint(self->mechanism);
        if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
            err == RD_KAFKA_RESP_ERR__RESOLVE) {
            self->brokersDown = true;
            self->outages++;
        }
    }

    // librdkafka's log lines are never printed. The error callback is served
    // only by polling, which a window does not do before its partitions are
    // assigned, so an authentication or certificate failure is taken from the
    // log line that reports it, scrubbed of secrets: credentials and
    // certificates do not mend themselves, so the window stops waiting for the
    // brokers and says why. (A handshake cut by a restarting broker is not one.)
    static void onLog(const rd_kafka_t* rk, int level, const char*, const char* line) {
        if (!rk || level > 3 || !line)
            return;
        const std::string_view l(line);
        const std::size_t auth = l.find("SASL authentication error");
        const bool certificate = l.find("SSL handshake failed") != std::string_view::npos &&
                                 l.find("certificate verify failed") != std::string_view::npos;
        if (auth == std::string_view::npos && !certificate)
            return;
        auto* self = static_cast<KafkaErrors*>(rd_kafka_opaque(rk));
        if (!self)
            return;
        // "sasl_ssl://host:port/bootstrap: SASL authentication error: …": from the cause on.
        const std::size_t from =
            auth != std::string_view::npos ? auth : l.find("SSL handshake failed");
        std::lock_guard lock(self->mutex);
        if (self->refusedBy.empty())
            self->refusedBy =
                scrubSecrets(std::string(l.substr(from)), self->secrets) +
                (auth != std::string_view::npos ? kafkaAuthHint(self->mechanism) : std::string());
    }
};

} // namespace

struct KafkaSource::Impl {
    Impl(const KafkaConfig& c, KafkaSourceOptions o)
        : cfg(c), options(o), decoder(c), receiptSpec(c.receiptTopics), callerSpec(c.callerTopics),
          errors(std::make_shared<KafkaErrors>()) {
        errors->secrets = propertySecrets(c.properties);
        for (const auto& [k, v] : c.properties)
            if (k == "sasl.mechanisms" || k == "sasl.mechanism")
                errors->mechanism = v;
    }

    ~Impl() { closeConsumer(rk, 5000, errors); }

    // The observations of the batches this source delivered, filled again
    // once the model has applied them (no allocation per message).
    std::shared_ptr<ObservationPool> pool = makeObservationPool();

    KafkaConfig cfg;
    KafkaSourceOptions options;
    MessageDecoder decoder;
    TopicSpec receiptSpec, callerSpec;
    rd_kafka_t* rk = nullptr;
    std::map<std::string, TopicInfo> topics;
    std::map<PartitionKey, std::int64_t> assigned; // next offset to read, by partition
    EpochMillis coverageFrom = kNoTime;
    std::shared_ptr<KafkaErrors> errors; // librdkafka reports connection trouble here

    KafkaSettings settings() const { return {cfg.brokers, cfg.properties, cfg.partitioner}; }

    // What a consumer is for. Follow: the live tail (librdkafka's defaults
    // and ours). Point: cold reads, minutes of one partition per topic:
    // smaller fetches, so little is read past where a read stops. Window: a
    // window's bulk read, each partition from its own queue: a partition
    // that runs ahead fills its queue and its fetcher stops, so the queue
    // bound (per partition) is what a window read holds in prefetch.
    enum class Use { Follow, Point, Window };
    rd_kafka_t* newConsumer(Use use = Use::Follow, std::size_t partitions = 1) {
        std::string error;
        rd_kafka_conf_t* conf = makeKafkaConf(settings(), error);
        if (!conf)
            throw SourceError(error, true);
        char err[256];
        if (use == Use::Point && !cfg.properties.count("max.partition.fetch.bytes"))
            rd_kafka_conf_set(conf, "max.partition.fetch.bytes", "262144", err, sizeof err);
        if (use == Use::Window) {
            // What a window read holds in prefetch. A partition's queue stops
            // its fetcher at 512 KiB (16 MiB in all for many partitions, 256
            // KiB at least); since the reader wakes librdkafka's broker thread
            // when it runs dry, bigger queues no longer read faster. Messages
            // keep their whole fetch response alive, so responses are kept
            // small too: 1 MiB, 256 KiB of a partition. (4 MiB queues and
            // librdkafka's 50 MiB responses held 240 MiB during a 1M-call
            // scan, 1 MiB queues about 60 MiB, as fast; 512 KiB ones 10 MiB
            // less again, as fast, and the window's decoded queue uses that
            // room better: see Monitor::loadWindow. 256 KiB ones read slower.)
            const std::size_t kib =
                std::clamp<std::size_t>(16 * 1024 / std::max<std::size_t>(partitions, 1), 256, 512);
            const std::pair<const char*, std::string> window[] = {
                {"queued.max.messages.kbytes", std::to_string(kib)},
                {"fetch.max.bytes", "1048576"},
                {"max.partition.fetch.bytes", "262144"}};
            for (const auto& [key, value] : window)
                if (!cfg.properties.count(key))
                    rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err);
        }
        rd_kafka_conf_set_error_cb(conf, &KafkaErrors::onError);
        rd_kafka_conf_set_log_cb(conf, &KafkaErrors::onLog);
        rd_kafka_conf_set_opaque(conf, errors.get());
        rd_kafka_t* c = makeManualConsumer(settings(), error, conf);
        if (!c)
            throw SourceError(error, true);
        return c;
    }

    // A consumer and a decoder of its own (a cold fetch, a check), so a live
    // follow() is not disturbed; closed when it goes.
    struct OwnConsumer {
        explicit OwnConsumer(Impl& impl, Use use = Use::Follow, std::size_t partitions = 1)
            : rk(impl.newConsumer(use, partitions)), decoder(impl.cfg), errors(impl.errors) {}
        ~OwnConsumer() { closeConsumer(rk, 5000, errors); }
        OwnConsumer(const OwnConsumer&) = delete;
        OwnConsumer& operator=(const OwnConsumer&) = delete;
        rd_kafka_t* rk;
        MessageDecoder decoder;
        std::shared_ptr<KafkaErrors> errors;
    };

    // The consumer of cold reads (fetchCall), made on the first and kept:
    // a drill-down after the first pays no connection, and the two reads of
    // one drill-down share it. Dropped after a failure.
    std::mutex coldMutex;
    std::unique_ptr<OwnConsumer> cold;
    // Topics listed by prepareColdRead for the read that follows it (taken
    // once, and only within seconds: partition counts are not kept).
    std::optional<std::map<std::string, TopicInfo>> coldTopics;
    std::chrono::steady_clock::time_point coldTopicsAt;
    static ObservationBatch readCall(Impl& self, OwnConsumer& own, const std::string& callId,
                                     EpochMillis from, EpochMillis to,
                                     const std::atomic<bool>& cancel, ColdFetchStats* stats);

    void ensureConsumer() {
        if (!rk)
            rk = newConsumer();
    }

    // Topics of the broker that match the config, with their partition counts.
    // `listed` (if given) receives every topic name the brokers listed, matching or not.
    // Asked in short slices, so `cancel` is heard while brokers do not answer.
    std::map<std::string, TopicInfo> resolveTopics(rd_kafka_t* consumer, int timeoutMs = 10'000,
                                                   std::set<std::string>* listed = nullptr,
                                                   const std::atomic<bool>& cancel = kNever) {
        const rd_kafka_metadata_t* md = nullptr;
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
        // A transport failure (connection refused, reset) for two seconds is
        // an outage to show now, not after the whole timeout; the caller
        // retries. A slow answer (timed out) is waited for.
        const auto refusedBy = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!cancel) {
            e = rd_kafka_metadata(consumer, 1, nullptr, &md, std::min(timeoutMs, 1000));
            if (e != RD_KAFKA_RESP_ERR__TIMED_OUT && e != RD_KAFKA_RESP_ERR__TRANSPORT)
                break;
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline || !errors->refusal().empty() ||
                (e == RD_KAFKA_RESP_ERR__TRANSPORT && now >= refusedBy))
                break;
        }
        if (cancel && !md)
            throw SourceError("Kafka: cancelled");
        if (e) {
            // The error callback knows why (authentication, TLS); the metadata
            // call only that the brokers did not answer.
            const std::string why = errors->refusal();
            throw SourceError("Kafka (" + cfg.brokers +
                              "): " + (why.empty() ? std::string(rd_kafka_err2str(e)) : why));
        }
        std::map<std::string, TopicInfo> out;
        for (int i = 0; i < md->topic_cnt; ++i) {
            const auto& t = md->topics[i];
            const std::string name = t.topic;
            if (listed && t.err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
                listed->insert(name);
            if (t.err || name.rfind("__", 0) == 0)
                continue;
            if (receiptSpec.matches(name))
                out[name] = {Role::Receipt, t.partition_cnt};
            else if (callerSpec.matches(name))
                out[name] = {Role::Caller, t.partition_cnt};
        }
        rd_kafka_metadata_destroy(md);
        return out;
    }

    // Offsets at timestamp `t` for the given partitions (-1 where none is later).
    std::map<PartitionKey, std::int64_t>
    offsetsAt(rd_kafka_t* consumer, const std::vector<PartitionKey>& parts, EpochMillis t) {
        std::map<PartitionKey, std::int64_t> out;
        if (parts.empty())
            return out;
        rd_kafka_topic_partition_list_t* list =
            rd_kafka_topic_partition_list_new(static_cast<int>(parts.size()));
        for (const auto& p : parts)
            rd_kafka_topic_partition_list_add(list, p.topic.c_str(), p.partition)->offset = t;
        const auto e = rd_kafka_offsets_for_times(consumer, list, 15'000);
        if (e) {
            rd_kafka_topic_partition_list_destroy(list);
            throw SourceError(std::string("Kafka: offsets by timestamp: ") + rd_kafka_err2str(e));
        }
        for (int i = 0; i < list->cnt; ++i)
            out[{list->elems[i].topic, list->elems[i].partition}] = list->elems[i].offset;
        rd_kafka_topic_partition_list_destroy(list);
        return out;
    }

    // A partition's earliest and end offsets; retried for a partition whose
    // leader is not known yet, for at most a minute and never after `cancel`.
    std::pair<std::int64_t, std::int64_t> watermarks(rd_kafka_t* consumer, const PartitionKey& p,
                                                     const std::atomic<bool>& cancel = kNever) {
        std::int64_t low = 0, high = 0;
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!cancel) {
            e = rd_kafka_query_watermark_offsets(consumer, p.topic.c_str(), p.partition, &low,
                                                 &high, 5'000);
            if (!e)
                return {low, high};
            if (std::chrono::steady_clock::now() > deadline)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
        if (cancel)
            throw SourceError("Kafka: cancelled");
        throw SourceError("Kafka: end offsets of " + p.topic + ": " + rd_kafka_err2str(e));
    }

    void assign(rd_kafka_t* consumer, const std::map<PartitionKey, std::int64_t>& offsets) {
        rd_kafka_topic_partition_list_t* list =
            rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
        for (const auto& [p, off] : offsets)
            rd_kafka_topic_partition_list_add(list, p.topic.c_str(), p.partition)->offset = off;
        const auto e = rd_kafka_assign(consumer, list);
        rd_kafka_topic_partition_list_destroy(list);
        if (e)
            throw SourceError(std::string("Kafka: assign: ") + rd_kafka_err2str(e));
    }

    // A message's timestamp; one without (-1: old message format, some
    // proxies) counts as read now rather than as 1970.
    static EpochMillis timestampOf(const rd_kafka_message_t* msg) {
        rd_kafka_timestamp_type_t tt;
        const std::int64_t ts = rd_kafka_message_timestamp(msg, &tt);
        return ts < 0 || tt == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nowMillis() : ts;
    }

    // The fetcher hit an offset that no longer exists (auto.offset.reset is
    // "error"): retention deleted it before it was read, or the topic was
    // recreated. Resumes at the earliest offset still there and records what
    // was lost as a gap; `positions` holds every assigned partition's next offset.
    void recoverLostOffsets(rd_kafka_t* consumer, const rd_kafka_message_t* msg,
                            std::map<PartitionKey, std::int64_t>& positions,
                            ObservationBatch& batch) {
        const PartitionKey key{rd_kafka_topic_name(msg->rkt), msg->partition};
        const auto it = positions.find(key);
        if (it == positions.end())
            return;
        std::int64_t low = 0, high = 0;
        if (rd_kafka_query_watermark_offsets(consumer, key.topic.c_str(), key.partition, &low,
                                             &high, 5000))
            return; // the brokers do not answer: the error comes again, and so do we
        const std::int64_t next = it->second;
        if (next < low)
            batch.gaps.push_back({key.topic + "/" + std::to_string(key.partition), next, low});
        else if (next > high) // the topic was recreated: its offsets started again
            batch.gaps.push_back({key.topic + "/" + std::to_string(key.partition), high, high});
        it->second = low;
        assign(consumer, positions);
    }

    // Decodes one message into the batch (or a rejection).
    // `dec` is the calling consumer's own decoder (a decoder's parser is not
    // shared between threads): `decoder` for the loading/following thread.
    void decode(const rd_kafka_message_t* msg, Role role, ObservationBatch& batch,
                MessageDecoder& dec) const {
        const MessageOrigin origin{msg->partition, msg->offset, timestampOf(msg)};
        const std::string_view payload(static_cast<const char*>(msg->payload), msg->len);
        std::string why;
        // Decoded in place, into a spent observation's buffers when the
        // batch has a pool.
        if (role == Role::Receipt) {
            if (dec.decodeReceipt(payload, origin, batch.addReceipt(), why))
                return;
            batch.dropLastReceipt();
        } else {
            if (dec.decodeCallerEvent(payload, origin, batch.addCallerEvent(), why))
                return;
            batch.dropLastCallerEvent();
        }
        batch.rejected.push_back({why,
                                  std::string(rd_kafka_topic_name(msg->rkt)) + "/" +
                                      std::to_string(msg->partition) + "@" +
                                      std::to_string(msg->offset),
                                  MessageDecoder::sampleOf(payload)});
    }

    // A configured topic spec that matches nothing on the brokers is a fact to
    // state once, not an outage, and not data: while no receipt topic exists,
    // no receipt coverage is claimed, so receipt_missing is not judged (it
    // would flag every finished record).
    bool receiptsMissing = false, callersMissing = false;
    void checkMissing(ObservationSink& sink) {
        bool receipts = false, callers = false;
        for (const auto& [name, info] : topics)
            (info.role == Role::Receipt ? receipts : callers) = true;
        const auto say = [&](const char* what, const std::string& spec, bool missing, bool was) {
            if (missing && !was)
                sink.health(
                    {"kafka", true, "", nowMillis(), 0,
                     std::string(what) + " topics \"" + spec +
                         "\" match no topic on the brokers: not read until they exist" +
                         (what[0] == 'r' ? "; receipt_missing is not judged meanwhile" : "")});
            else if (!missing && was)
                sink.health(
                    {"kafka", true, "", nowMillis(), 0,
                     std::string(what) + " topics \"" + spec + "\" exist now: reading them"});
        };
        const bool r = !cfg.receiptTopics.empty() && !receipts;
        const bool c = !cfg.callerTopics.empty() && !callers;
        say("receipt", cfg.receiptTopics, r, receiptsMissing);
        say("caller event", cfg.callerTopics, c, callersMissing);
        receiptsMissing = r;
        callersMissing = c;
    }

    Role roleOf(const char* topic) const {
        const auto it = topics.find(topic);
        return it == topics.end() ? Role::Receipt : it->second.role;
    }

    // Messages not yet read, asking the brokers for the end offsets now;
    // -1 when a broker did not answer (then nothing is known to be read).
    bool topicVanished = false; // lag() met a topic the brokers no longer know

    std::int64_t lag(std::map<PartitionKey, std::int64_t>* ends = nullptr) {
        std::int64_t total = 0;
        for (const auto& [p, next] : assigned) {
            std::int64_t low = 0, high = 0;
            const auto e = rd_kafka_query_watermark_offsets(rk, p.topic.c_str(), p.partition, &low,
                                                            &high, 1000);
            if (e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                e == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
                e == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
                topicVanished = true; // the next topic check drops it; not an outage
                continue;
            }
            if (e)
                return -1;
            if (ends)
                (*ends)[p] = high;
            if (next < 0) // not started yet
                total += high - low;
            else if (high > next)
                total += high - next;
        }
        return total;
    }

    // Coverage under steady traffic: the end offsets asked at each health
    // check are a checkpoint; once every partition has been read up to its
    // checkpoint's end, everything produced before that check has been read —
    // though new messages keep the lag above zero. The oldest checkpoints go
    // first; the newest one reached is the coverage.
    struct Checkpoint {
        EpochMillis asked;
        std::map<PartitionKey, std::int64_t> ends;
    };
    std::deque<Checkpoint> checkpoints;
    static constexpr std::size_t kMaxCheckpoints = 240; // 2 min of checks at 2 a second

    EpochMillis reachedCheckpoint() {
        EpochMillis reached = kNoTime;
        while (!checkpoints.empty()) {
            bool all = true;
            for (const auto& [p, end] : checkpoints.front().ends) {
                const auto it = assigned.find(p);
                if (it != assigned.end() && it->second < end) {
                    all = false;
                    break;
                }
            }
            if (!all)
                break;
            reached = checkpoints.front().asked;
            checkpoints.pop_front();
        }
        return reached;
    }
};

KafkaSource::KafkaSource(const KafkaConfig& config, KafkaSourceOptions options)
    : m(std::make_unique<Impl>(config, options)) {}
KafkaSource::~KafkaSource() = default;

// How far (in message time) a partition may run ahead of the slowest while a
// window loads. Not a share of the window: memory holds what the partitions
// read ahead of the slowest, and a 3-day window over 4 busy hours let them
// drift 2 h apart (the whole store held until the slowest caught up).
constexpr std::int64_t kPartitionLead = 10 * 60'000;

void KafkaSource::loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                             const std::atomic<bool>& cancel) {
    m->ensureConsumer();
    m->topics = m->resolveTopics(m->rk, 10'000, nullptr, cancel);
    m->checkMissing(sink);
    std::vector<PartitionKey> parts;
    for (const auto& [name, info] : m->topics)
        for (int p = 0; p < info.partitions; ++p)
            parts.push_back({name, p});
    // Start at `since` in every partition; stop at the end offset seen now.
    // The ends are asked first: a partition with nothing at or after `since`
    // (offsets_for_times answers -1) starts at the end seen before the lookup,
    // so nothing produced in between is skipped and nothing older is read.
    std::map<PartitionKey, std::pair<std::int64_t, std::int64_t>> marks;
    const EpochMillis asked = nowMillis(); // all written before this is below the ends
    for (const auto& p : parts)
        marks[p] = m->watermarks(m->rk, p, cancel);
    std::map<PartitionKey, std::int64_t> start;
    if (m->options.fromBeginning || since == kNoTime) {
        for (const auto& p : parts)
            start[p] = RD_KAFKA_OFFSET_BEGINNING;
    } else {
        start = m->offsetsAt(m->rk, parts, since);
    }
    std::map<PartitionKey, std::int64_t> remaining;
    for (const auto& p : parts) {
        const auto [low, high] = marks[p];
        std::int64_t& s = start[p];
        if (s == RD_KAFKA_OFFSET_BEGINNING)
            s = low;
        else if (s < 0 || s > high)
            s = high; // nothing at or after `since`
        else if (s < low)
            s = low;
        if (s < high)
            remaining[p] = high;
    }
    m->assigned = start;
    m->coverageFrom = since == kNoTime ? 0 : since;
    std::int64_t total = 0; // messages to read, for the progress shown while loading
    for (const auto& [p, end] : remaining)
        total += end - start[p];
    const auto progress = [&] {
        std::int64_t left = 0;
        for (const auto& [p, end] : remaining)
            left += std::max<std::int64_t>(0, end - m->assigned[p]);
        sink.loadProgress("kafka", total > 0 ? int(100 * (total - left) / total) : 100);
    };
    progress();
    auto lastShown = std::chrono::steady_clock::now();

    // The newest timestamp read in each partition still being read: the
    // window is read up to the oldest of them (partitions are read in
    // offset order, which is time order up to producers' clock skew).
    std::map<PartitionKey, EpochMillis> newest;
    const auto readTo = [&](const PartitionKey& p) {
        const auto it = newest.find(p);
        return it == newest.end() ? m->coverageFrom : it->second;
    };
    // Partitions move through time together: each has its own queue, and one
    // more than `lead` ahead of the slowest is not read from until the slowest
    // catches up. Its fetcher stops when its queue is full (bounded by
    // queued.max.messages.kbytes) and nothing fetched is dropped: pausing a
    // partition instead discards its prefetch, and with 4 MiB fetches a
    // partition of sparse messages runs ahead by hours in one fetch, so it was
    // paused, refetched and paused again (a 1M-call scan spent 12 s waiting).
    // (A window without a start — the whole topics — allows an hour.)
    const std::int64_t lead = since == kNoTime ? 3'600'000 : kPartitionLead;
    // A consumer of its own (queues bounded per partition, within a total),
    // closed when the window is read; following goes on from where it stopped
    // with m->rk.
    Impl::OwnConsumer window(*m, Impl::Use::Window, remaining.size());
    rd_kafka_queue_t* consumerQueue = rd_kafka_queue_get_consumer(window.rk);
    std::map<PartitionKey, rd_kafka_queue_t*> queues;
    for (const auto& [p, end] : remaining) {
        rd_kafka_queue_t* q = rd_kafka_queue_get_partition(window.rk, p.topic.c_str(), p.partition);
        if (!q)
            continue; // read through the consumer queue
        rd_kafka_queue_forward(q, nullptr);
        queues.emplace(p, q);
    }
    // Every queue reference and message goes before the consumer is closed,
    // whatever is thrown (librdkafka waits for them when it is destroyed).
    const auto joinQueues = [&] {
        for (const auto& [p, q] : queues)
            rd_kafka_queue_destroy(q);
        queues.clear();
        rd_kafka_queue_destroy(consumerQueue);
    };
    ObservationBatch batch(m->pool);
    // Each partition's batches go to the model in order, as one stream of
    // their own (see Monitor::applyQueued): numbered from 1.
    // (A partition not listed at the start, which never happens, has one
    // stream for all such, after theirs.)
    std::map<PartitionKey, std::uint32_t> streamOf;
    for (const auto& p : parts)
        streamOf.emplace(p, static_cast<std::uint32_t>(streamOf.size() + 1));
    const auto kUnlistedStream = static_cast<std::uint32_t>(streamOf.size() + 1);
    // The partition of the message before (a queue's batch is one partition's
    // messages): its key, stream, next offset, newest time, end and role
    // looked up once, not in maps keyed by topic name per message.
    struct Current {
        rd_kafka_topic_t* rkt = nullptr;
        std::int32_t partition = -1;
        std::uint32_t stream = 0;
        PartitionKey key;
        std::int64_t* next = nullptr;  // in m->assigned
        EpochMillis* newest = nullptr; // in `newest`, once it has a time
        std::int64_t end = INT64_MAX;  // in `remaining` (INT64_MAX: read)
        Role role = Role::Receipt;
    } cur;
    const auto partitionOf = [&](const rd_kafka_message_t* msg) -> Current& {
        if (msg->rkt != cur.rkt || msg->partition != cur.partition) {
            cur.rkt = msg->rkt;
            cur.partition = msg->partition;
            cur.key = {rd_kafka_topic_name(msg->rkt), msg->partition};
            const auto st = streamOf.find(cur.key);
            cur.stream = st == streamOf.end() ? kUnlistedStream : st->second;
            cur.next = &m->assigned[cur.key];
            const auto n = newest.find(cur.key);
            cur.newest = n == newest.end() ? nullptr : &n->second;
            const auto r = remaining.find(cur.key);
            cur.end = r == remaining.end() ? INT64_MAX : r->second;
            cur.role = m->roleOf(cur.key.topic.c_str());
        }
        return cur;
    };
    // A batch holds one partition's messages: the model applies it once every
    // partition has been read as far as its earliest (a partition ahead waits
    // packed, not in the store), and each batch tells how far that is.
    std::uint32_t batchStream = 0;
    EpochMillis batchFrom = INT64_MAX;
    // How far every partition still read has been read (the oldest of their
    // newest times; INT64_MAX when none is left), by stream number: asked for
    // every batch. The newest time read in each partition, and the
    // partitions still read (kept as `remaining` loses them).
    std::vector<EpochMillis> newestBy(streamOf.size() + 2, kNoTime); // (and kUnlistedStream's)
    std::vector<std::uint32_t> open;
    std::size_t openOf = SIZE_MAX; // remaining.size() when `open` was made
    const auto slowestRead = [&] {
        if (openOf != remaining.size()) {
            open.clear();
            for (const auto& [p, end] : remaining)
                if (const auto it = streamOf.find(p); it != streamOf.end())
                    open.push_back(it->second);
            openOf = remaining.size();
        }
        EpochMillis t = INT64_MAX;
        for (const std::uint32_t st : open)
            t = std::min(t, newestBy[st] == kNoTime ? m->coverageFrom : newestBy[st]);
        return t;
    };
    // That, as reported: never past the window's end or now.
    const auto readUpTo = [&] {
        return std::min(until == kNoTime ? nowMillis() : until, slowestRead());
    };
    const auto flush = [&] {
        if (!batch.hasAnything())
            return;
        batch.readFrom = batchFrom == INT64_MAX ? kNoTime : batchFrom;
        batch.stream = batchStream;
        batch.kafkaReadTo = remaining.empty() ? kNoTime : readUpTo();
        sink.deliver(std::move(batch));
        batch.clear(); // (a sink may have kept a copy)
        batchFrom = INT64_MAX;
    };
    const auto handle = [&](rd_kafka_message_t* msg) {
        const std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> owned(
            msg, rd_kafka_message_destroy);
        if (msg->rkt && !msg->err) {
            Current& p = partitionOf(msg);
            *p.next = msg->offset + 1;
            const EpochMillis ts = Impl::timestampOf(msg);
            if (!p.newest)
                p.newest = &newest.try_emplace(p.key, ts).first->second;
            *p.newest = std::max(*p.newest, ts);
            const bool inWindow = until == kNoTime || ts < until;
            if (inWindow && p.stream != batchStream)
                flush(); // (told how far the partitions were read before this one)
            newestBy[p.stream] = *p.newest;
            if (inWindow) {
                batchStream = p.stream;
                batchFrom = std::min(batchFrom, ts);
                m->decode(msg, p.role, batch, m->decoder);
            }
            if (*p.next >= p.end) {
                remaining.erase(p.key);
                p.end = INT64_MAX;
            }
        } else if (msg->rkt) {
            cur.rkt = nullptr; // anything else: looked up again after it
            const PartitionKey key{rd_kafka_topic_name(msg->rkt), msg->partition};
            if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                // All that can be read now is read: under read_committed the
                // end lies past the commit markers and any open transaction.
                m->assigned[key] = std::max(m->assigned[key], msg->offset);
                remaining.erase(key);
            } else if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
                m->recoverLostOffsets(window.rk, msg, m->assigned, batch);
            }
            if (const auto it = remaining.find(key);
                it != remaining.end() && m->assigned[key] >= it->second)
                remaining.erase(it);
        }
    };
    std::vector<rd_kafka_message_t*> msgs(1000);
    const auto consume = [&](rd_kafka_queue_t* q, int timeoutMs) {
        const ssize_t n = rd_kafka_consume_batch_queue(q, timeoutMs, msgs.data(), msgs.size());
        for (ssize_t k = 0; k < n; ++k) {
            try {
                handle(msgs[static_cast<std::size_t>(k)]);
            } catch (...) {
                for (ssize_t rest = k + 1; rest < n; ++rest)
                    rd_kafka_message_destroy(msgs[static_cast<std::size_t>(rest)]);
                throw;
            }
        }
        return std::max<ssize_t>(n, 0);
    };
    auto lastProgress = std::chrono::steady_clock::now();
    std::vector<PartitionKey> readable;
    try {
        m->assign(window.rk, start);
        while (!remaining.empty() && !cancel) {
            // One batch from every partition not too far ahead; errors, events
            // and partitions without a queue of their own come on the consumer queue.
            const EpochMillis slowest = slowestRead();
            PartitionKey slowestKey;
            readable.clear();
            for (const auto& [p, end] : remaining) {
                const EpochMillis t = readTo(p);
                if (t == slowest && slowestKey.topic.empty())
                    slowestKey = p;
                if (t <= slowest + lead)
                    readable.push_back(p);
            }
            ssize_t got = consume(consumerQueue, 0);
            for (const PartitionKey& p : readable)
                if (const auto q = queues.find(p); q != queues.end())
                    got += consume(q->second, 0);
            if (got == 0) { // wait for the partition everything waits for
                // librdkafka 2.0 stops fetching a partition whose queue is
                // full and, when every queue is, its broker thread sleeps up
                // to a second: reading drains queues without waking it (2.2
                // added fetch.queue.backoff.ms for this). Nothing to read here
                // means the queue everything waits for has been drained: a
                // request to that partition's broker (its offsets, read-only)
                // wakes the thread, which then fetches again. A 1M-call scan's
                // Kafka read took 10.9 s with the sleeps, 7.7 s without.
                std::int64_t low = 0, high = 0;
                rd_kafka_query_watermark_offsets(window.rk, slowestKey.topic.c_str(),
                                                 slowestKey.partition, &low, &high, 100);
                const auto q = queues.find(slowestKey);
                got = consume(q != queues.end() ? q->second : consumerQueue, 100);
            }
            const auto now = std::chrono::steady_clock::now();
            if (got > 0) {
                lastProgress = now;
            } else if (now - lastProgress > std::chrono::seconds(60)) {
                std::lock_guard lock(m->errors->mutex);
                const std::string& last = m->errors->lastError;
                throw SourceError("Kafka (" + m->cfg.brokers + "): no progress reading the window" +
                                  (last.empty() ? std::string() : ": " + last));
            }
            if (batch.size() + batch.rejected.size() >= kBatchMessages)
                flush();
            if (now - lastShown > std::chrono::milliseconds(250)) {
                lastShown = now;
                progress();
                flush(); // what is delivered is read up to here (the batch in hand is not)
                const EpochMillis upTo = readUpTo();
                if (!m->receiptsMissing)
                    sink.receiptCoverage(m->coverageFrom, upTo);
                // Held back to keep in step with the other source: nothing is
                // read meanwhile, and the fetchers stop when the queues are full.
                sink.loadedUpTo("kafka", upTo, cancel);
                const auto after = std::chrono::steady_clock::now();
                lastProgress += after - now; // held, not stalled
                lastShown = after;
            }
        }
    } catch (...) {
        joinQueues();
        throw;
    }
    joinQueues();
    flush();
    sink.loadProgress("kafka", 100);
    sink.readTo("kafka", asked);
    if (!m->receiptsMissing)
        sink.receiptCoverage(m->coverageFrom, asked);
    sink.health({"kafka", true, "", nowMillis(), 0, {}});
}

void KafkaSource::follow(ObservationSink& sink, const std::atomic<bool>& stop) {
    if (!m->rk) {
        m->ensureConsumer();
        m->topics = m->resolveTopics(m->rk, 10'000, nullptr, stop);
        m->checkMissing(sink);
        std::map<PartitionKey, std::int64_t> start;
        for (const auto& [name, info] : m->topics)
            for (int p = 0; p < info.partitions; ++p) {
                const auto [low, high] = m->watermarks(m->rk, {name, p}, stop);
                start[{name, p}] = m->options.fromBeginning ? low : high;
            }
        m->assigned = start;
        m->coverageFrom = nowMillis();
    }
    // Fetching restarts exactly where the window stopped: what the fetcher
    // prefetched meanwhile is dropped and read again, and offsets deleted
    // since (retention during a long window) show up as a gap.
    m->assign(m->rk, m->assigned);
    bool up = true;
    int seenOutages = 0;
    {
        std::lock_guard lock(m->errors->mutex);
        seenOutages = m->errors->outages;
    }
    auto lastTopicCheck = std::chrono::steady_clock::now();
    auto lastHealth = std::chrono::steady_clock::now();
    ObservationBatch batch(m->pool);
    auto lastDeliver = std::chrono::steady_clock::now();
    while (!stop) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(m->rk, 100);
        if (msg && msg->rkt) {
            const PartitionKey key{rd_kafka_topic_name(msg->rkt), msg->partition};
            if (!msg->err) {
                m->assigned[key] = msg->offset + 1;
                m->decode(msg, m->roleOf(key.topic.c_str()), batch, m->decoder);
            } else if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                // Past commit markers: the lag is measured from here.
                m->assigned[key] = std::max(m->assigned[key], msg->offset);
            } else if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
                m->recoverLostOffsets(m->rk, msg, m->assigned, batch);
            }
        }
        if (msg)
            rd_kafka_message_destroy(msg);
        const auto now = std::chrono::steady_clock::now();
        if (batch.size() + batch.rejected.size() >= kBatchMessages ||
            (now - lastDeliver > std::chrono::milliseconds(50) && batch.hasAnything())) {
            sink.deliver(std::move(batch));
            batch.clear(); // (a sink may have kept a copy)
            lastDeliver = now;
        }
        if (now - lastTopicCheck > std::chrono::seconds(10) || m->topicVanished) {
            m->topicVanished = false;
            // New topics matching the pattern, or new partitions: read them
            // from their beginning (everything in them is new to us).
            lastTopicCheck = now;
            try {
                std::set<std::string> listed;
                const auto found = m->resolveTopics(m->rk, 2000, &listed);
                bool changed = false;
                for (const auto& [name, info] : found)
                    for (int p = 0; p < info.partitions; ++p)
                        if (!m->assigned.count({name, p})) {
                            m->assigned[{name, p}] = m->watermarks(m->rk, {name, p}, stop).first;
                            changed = true;
                        }
                // A topic deleted from the brokers is no longer read (its
                // partitions would never answer and Kafka would show DOWN for
                // ever); what was not read of it is reported.
                std::set<std::string> gone;
                for (auto it = m->assigned.begin(); it != m->assigned.end();) {
                    if (!listed.count(it->first.topic)) {
                        gone.insert(it->first.topic);
                        it = m->assigned.erase(it);
                        changed = true;
                    } else {
                        ++it;
                    }
                }
                for (const auto& name : gone)
                    sink.health(
                        {"kafka", true, "", nowMillis(), 0,
                         "topic " + name + " was deleted from the brokers; no longer read"});
                m->topics = found;
                m->checkMissing(sink);
                if (changed)
                    m->assign(m->rk, m->assigned);
            } catch (const SourceError& e) {
                std::lock_guard lock(m->errors->mutex);
                m->errors->brokersDown = true;
                m->errors->lastError = e.what();
            }
        }
        if (now - lastHealth > std::chrono::milliseconds(500)) {
            lastHealth = now;
            // Receipts count as read up to `asked` only when every partition's
            // end offset, asked of the brokers at that time, has been reached.
            const EpochMillis asked = nowMillis();
            Impl::Checkpoint point{asked, {}};
            const std::int64_t lag = m->lag(&point.ends);
            bool down;
            int outages;
            std::string error;
            {
                std::lock_guard lock(m->errors->mutex);
                if (lag >= 0)
                    m->errors->brokersDown = false; // the brokers answered just now
                down = m->errors->brokersDown || lag < 0;
                outages = m->errors->outages;
                error = m->errors->lastError.empty() ? std::string("Kafka: brokers do not answer")
                                                     : m->errors->lastError;
            }
            // An outage shorter than this check is still shown, then the return.
            if (up && (down || outages != seenOutages)) {
                up = false;
                sink.health({"kafka", false, error, kNoTime, lag, {}});
            }
            seenOutages = outages;
            if (!up && !down) {
                up = true;
                sink.health({"kafka", true, "", nowMillis(), lag, {}});
            }
            if (lag >= 0) {
                m->checkpoints.push_back(std::move(point));
                if (m->checkpoints.size() > Impl::kMaxCheckpoints)
                    m->checkpoints.pop_front(); // far behind: coverage waits for a later one
            }
            const EpochMillis reached = m->reachedCheckpoint();
            if (reached != kNoTime) {
                sink.readTo("kafka", reached);
                if (!m->receiptsMissing)
                    sink.receiptCoverage(m->coverageFrom, reached);
            }
        }
    }
    if (batch.hasAnything())
        sink.deliver(std::move(batch));
}

KafkaCheck KafkaSource::check(std::size_t samplePerTopic, const std::atomic<bool>& cancel) {
    Impl::OwnConsumer own(*m);
    rd_kafka_t* c = own.rk;
    KafkaCheck out;
    const auto topics = m->resolveTopics(c, 10'000, nullptr, cancel);
    bool receipts = false, callers = false;
    std::map<PartitionKey, std::int64_t> start, stopAt;
    std::map<std::string, std::size_t> index; // topic -> its entry in out.topics
    // One deadline for the whole check: a partition without a leader, or a
    // topic that can be listed but not read, is a problem named once, not a
    // minute of waiting per partition.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::set<std::string> said;
    const auto problem = [&](const std::string& text) {
        if (said.insert(text).second)
            out.problems.push_back(text);
    };
    for (const auto& [name, info] : topics) {
        KafkaCheck::Topic t{name, info.role == Role::Receipt, info.partitions, 0, ""};
        (t.receipts ? receipts : callers) = true;
        // The newest messages, spread over the partitions.
        const auto parts = static_cast<std::size_t>(std::max(1, info.partitions));
        const auto per = static_cast<std::int64_t>((samplePerTopic + parts - 1) / parts);
        for (int p = 0; p < info.partitions && !cancel; ++p) {
            std::int64_t low = 0, high = 0;
            const auto e =
                std::chrono::steady_clock::now() < deadline
                    ? rd_kafka_query_watermark_offsets(c, name.c_str(), p, &low, &high, 5000)
                    : RD_KAFKA_RESP_ERR__TIMED_OUT;
            if (e) {
                problem(name + "/" + std::to_string(p) + ": end offsets: " + rd_kafka_err2str(e));
                continue;
            }
            t.messages += high - low;
            if (high > low && per > 0) {
                start[{name, p}] = std::max(low, high - per);
                stopAt[{name, p}] = high;
            }
        }
        index[name] = out.topics.size();
        out.topics.push_back(std::move(t));
    }
    out.receiptsMissing = !m->cfg.receiptTopics.empty() && !receipts;
    out.callersMissing = !m->cfg.callerTopics.empty() && !callers;
    if (start.empty())
        return out;
    m->assign(c, start);
    std::map<std::string, std::set<std::string>> stamps; // topic -> timestamp types seen
    while (!stopAt.empty() && !cancel && std::chrono::steady_clock::now() < deadline) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(c, 200);
        if (!msg)
            continue;
        if (msg->rkt) {
            const PartitionKey key{rd_kafka_topic_name(msg->rkt), msg->partition};
            if (!msg->err) {
                start[key] = msg->offset + 1;
                ++out.sampled;
                rd_kafka_timestamp_type_t tt;
                rd_kafka_message_timestamp(msg, &tt);
                stamps[key.topic].insert(tt == RD_KAFKA_TIMESTAMP_CREATE_TIME ? "CreateTime"
                                         : tt == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME
                                             ? "LogAppendTime"
                                             : "none");
                m->decode(msg, topics.at(key.topic).role, out.sample, own.decoder);
                // Is the key where kafka.partitioner puts it? The cold
                // drill-down reads only that partition.
                const std::int32_t expected =
                    msg->key ? partitionForKey(std::string_view(static_cast<const char*>(msg->key),
                                                                msg->key_len),
                                               topics.at(key.topic).partitions, m->cfg.partitioner)
                             : -1;
                if (expected >= 0) {
                    ++out.keysChecked;
                    out.keysElsewhere += expected != msg->partition;
                }
            } else if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                stopAt.erase(key); // the rest is commit markers or an open transaction
            } else {
                problem(key.topic + "/" + std::to_string(key.partition) + ": " +
                        rd_kafka_err2str(msg->err));
                stopAt.erase(key);
            }
            if (const auto it = stopAt.find(key); it != stopAt.end() && start[key] >= it->second)
                stopAt.erase(it);
        } else if (msg->err) {
            problem(std::string("Kafka: ") + rd_kafka_err2str(msg->err));
        }
        rd_kafka_message_destroy(msg);
    }
    for (const auto& [p, end] : stopAt)
        problem(p.topic + "/" + std::to_string(p.partition) +
                ": the newest messages could not be read within 30 s");
    for (const auto& [topic, kinds] : stamps)
        out.topics[index[topic]].timestampType = kinds.size() == 1 ? *kinds.begin() : "mixed";
    return out;
}

ObservationBatch KafkaSource::fetchCall(const std::string& callId, EpochMillis from, EpochMillis to,
                                        const std::atomic<bool>& cancel, ColdFetchStats* stats) {
    std::lock_guard coldLock(m->coldMutex);
    if (!m->cold)
        m->cold = std::make_unique<Impl::OwnConsumer>(*m, Impl::Use::Point);
    try {
        return Impl::readCall(*m, *m->cold, callId, from, to, cancel, stats);
    } catch (...) {
        m->cold.reset();
        throw;
    }
}

void KafkaSource::prepareColdRead(const std::atomic<bool>& cancel) {
    std::lock_guard coldLock(m->coldMutex);
    try {
        if (!m->cold)
            m->cold = std::make_unique<Impl::OwnConsumer>(*m, Impl::Use::Point);
        m->coldTopics = m->resolveTopics(m->cold->rk, 10'000, nullptr, cancel);
        m->coldTopicsAt = std::chrono::steady_clock::now();
    } catch (const SourceError&) {
        // The read itself meets the failure again and reports it.
        m->cold.reset();
        m->coldTopics.reset();
    }
}

ObservationBatch KafkaSource::Impl::readCall(Impl& self, OwnConsumer& own,
                                             const std::string& callId, EpochMillis from,
                                             EpochMillis to, const std::atomic<bool>& cancel,
                                             ColdFetchStats* stats) {
    Impl* const m = &self;
    rd_kafka_t* c = own.rk;
    std::map<std::string, TopicInfo> topics;
    if (m->coldTopics &&
        std::chrono::steady_clock::now() - m->coldTopicsAt < std::chrono::seconds(5)) {
        topics = std::move(*m->coldTopics);
        m->coldTopics.reset();
    } else {
        m->coldTopics.reset();
        topics = m->resolveTopics(c, 10'000, nullptr, cancel);
    }
    std::vector<PartitionKey> parts;
    for (const auto& [name, info] : topics) {
        const std::int32_t p = partitionForKey(callId, info.partitions, m->cfg.partitioner);
        if (p < 0)
            throw SourceError("kafka.partitioner: \"" + m->cfg.partitioner +
                                  "\" spreads keys at random; a callId's partition cannot be known",
                              true);
        parts.push_back({name, p});
    }
    ObservationBatch batch;
    if (stats)
        stats->topics = static_cast<int>(parts.size());
    if (parts.empty())
        return batch;
    std::map<PartitionKey, std::int64_t> start, stopAt;
    if (m->options.fromBeginning || from == kNoTime)
        for (const auto& p : parts)
            start[p] = RD_KAFKA_OFFSET_BEGINNING;
    else
        start = m->offsetsAt(c, parts, from);
    const auto ends = (to == kNoTime || m->options.fromBeginning)
                          ? std::map<PartitionKey, std::int64_t>{}
                          : m->offsetsAt(c, parts, to);
    for (const auto& p : parts) {
        std::int64_t& s = start[p];
        const auto end = ends.find(p);
        if (s < 0 && s != RD_KAFKA_OFFSET_BEGINNING) {
            s = RD_KAFKA_OFFSET_END; // nothing at or after `from`
            continue;
        }
        if (s >= 0 && end != ends.end() && end->second >= 0) {
            // Both ends found by time: the offsets are messages the broker
            // holds, no watermark needed (a round trip per partition).
            if (s < end->second)
                stopAt[p] = end->second;
            continue;
        }
        const auto [low, high] = m->watermarks(c, p, cancel);
        if (s == RD_KAFKA_OFFSET_BEGINNING || s < low)
            s = low;
        std::int64_t e = high;
        if (end != ends.end() && end->second >= 0)
            e = std::min(high, end->second);
        if (s < e)
            stopAt[p] = e;
    }
    for (auto it = start.begin(); it != start.end();)
        it = stopAt.contains(it->first) ? std::next(it) : start.erase(it);
    if (stopAt.empty())
        return batch;
    // A partition paused where an earlier read stopped reads again.
    const auto each = [&](auto call) {
        rd_kafka_topic_partition_list_t* list =
            rd_kafka_topic_partition_list_new(static_cast<int>(start.size()));
        for (const auto& [p, off] : start)
            rd_kafka_topic_partition_list_add(list, p.topic.c_str(), p.partition);
        call(c, list);
        rd_kafka_topic_partition_list_destroy(list);
    };
    each(rd_kafka_resume_partitions);
    m->assign(c, start);
    // The next drill-down assigns its own partitions.
    struct Unassign {
        rd_kafka_t* c;
        ~Unassign() { rd_kafka_assign(c, nullptr); }
    } unassign{c};
    auto lastProgress = std::chrono::steady_clock::now();
    while (!stopAt.empty() && !cancel) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(c, 200);
        if (!msg) {
            if (std::chrono::steady_clock::now() - lastProgress > std::chrono::seconds(30))
                throw SourceError("Kafka (" + m->cfg.brokers + "): no progress reading partitions");
            continue;
        }
        lastProgress = std::chrono::steady_clock::now();
        if (msg->rkt) {
            const PartitionKey key{rd_kafka_topic_name(msg->rkt), msg->partition};
            const auto stop = stopAt.find(key);
            if (stop == stopAt.end() || (!msg->err && msg->offset >= stop->second)) {
                // Prefetched past where this read ends: not this read's (a
                // second read of the same call would deliver it twice).
                rd_kafka_message_destroy(msg);
                continue;
            }
            if (!msg->err) {
                start[key] = msg->offset + 1;
                if (stats)
                    stats->messagesScanned++;
                const std::string_view k(static_cast<const char*>(msg->key), msg->key_len);
                if (msg->key && k == callId) {
                    if (stats)
                        stats->messagesMatched++;
                    m->decode(msg, topics.at(key.topic).role, batch, own.decoder);
                }
            } else if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                start[key] = std::max(start[key], msg->offset);
                stopAt.erase(key); // the rest is commit markers or an open transaction
            } else if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
                m->recoverLostOffsets(c, msg, start, batch);
            }
            if (const auto it = stopAt.find(key); it == stopAt.end() || start[key] >= it->second) {
                stopAt.erase(key);
                // Done with this partition: it fetches no further while the
                // other is read.
                rd_kafka_topic_partition_list_t* one = rd_kafka_topic_partition_list_new(1);
                rd_kafka_topic_partition_list_add(one, key.topic.c_str(), key.partition);
                rd_kafka_pause_partitions(c, one);
                rd_kafka_topic_partition_list_destroy(one);
            }
        }
        rd_kafka_message_destroy(msg);
    }
    return batch;
}

} // namespace callscope
