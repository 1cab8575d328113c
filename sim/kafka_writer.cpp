// The simulator's producer, topic creation and whole-topic reader.
#include "sim/kafka_writer.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace callscope {
namespace {

std::atomic<std::int64_t> g_deliveryFailures{0};

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void*) {
    if (msg->err)
        g_deliveryFailures.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

KafkaProducer::KafkaProducer(rd_kafka_t* rk) : m_rk(rk) {}
KafkaProducer::~KafkaProducer() {
    rd_kafka_flush(m_rk, 10'000);
    rd_kafka_destroy(m_rk);
}

std::unique_ptr<KafkaProducer> KafkaProducer::create(const KafkaSettings& s, std::string& error) {
    rd_kafka_conf_t* conf = makeKafkaConf(s, error);
    if (!conf)
        return nullptr;
    char err[512];
    // The producer's partitioner decides which partition a callId lands on;
    // callscope's cold drill-down (SPEC §4.3) relies on knowing it.
    rd_kafka_topic_conf_t* tconf = rd_kafka_topic_conf_new();
    if (rd_kafka_topic_conf_set(tconf, "partitioner", s.partitioner.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
        error = "kafka partitioner: " + std::string(err);
        rd_kafka_topic_conf_destroy(tconf);
        rd_kafka_conf_destroy(conf);
        return nullptr;
    }
    rd_kafka_conf_set_default_topic_conf(conf, tconf);
    if (!s.properties.count("linger.ms"))
        rd_kafka_conf_set(conf, "linger.ms", "5", err, sizeof err);
    rd_kafka_conf_set_dr_msg_cb(conf, onDelivery);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        error = "kafka producer: " + std::string(err);
        return nullptr;
    }
    return std::unique_ptr<KafkaProducer>(new KafkaProducer(rk));
}

bool KafkaProducer::produce(const std::string& topic, std::string_view key, std::string_view value,
                            std::string& error, std::int64_t timestampMs) {
    for (int tries = 0; tries < 1000; ++tries) {
        const rd_kafka_resp_err_t e =
            rd_kafka_producev(m_rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                              RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                              RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                              RD_KAFKA_V_TIMESTAMP(timestampMs), RD_KAFKA_V_END);
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_poll(m_rk, 0);
            return true;
        }
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            error = rd_kafka_err2str(e);
            return false;
        }
        rd_kafka_poll(m_rk, 50);
    }
    error = "kafka producer queue stayed full";
    return false;
}

bool KafkaProducer::flush(int timeoutMs) {
    return rd_kafka_flush(m_rk, timeoutMs) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

std::int64_t KafkaProducer::deliveryFailures() const {
    return g_deliveryFailures.load();
}

bool ensureTopics(const KafkaSettings& s, const std::vector<std::string>& topics, int partitions,
                  std::string& error, std::vector<std::string>* existed) {
    rd_kafka_conf_t* conf = makeKafkaConf(s, error);
    if (!conf)
        return false;
    char err[512];
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        error = err;
        return false;
    }
    std::vector<rd_kafka_NewTopic_t*> newTopics;
    for (const auto& t : topics)
        newTopics.push_back(rd_kafka_NewTopic_new(t.c_str(), partitions, 1, err, sizeof err));
    rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(opts, 15'000, err, sizeof err);
    rd_kafka_CreateTopics(rk, newTopics.data(), newTopics.size(), opts, q);
    bool ok = true;
    rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30'000);
    if (!ev) {
        error = "no answer from the Kafka brokers at " + s.brokers;
        ok = false;
    } else if (rd_kafka_event_error(ev)) {
        error = rd_kafka_event_error_string(ev);
        ok = false;
    } else {
        const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &n);
        for (size_t i = 0; i < n; ++i) {
            const auto e = rd_kafka_topic_result_error(results[i]);
            if (e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS && existed)
                existed->emplace_back(rd_kafka_topic_result_name(results[i]));
            if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
                error = std::string(rd_kafka_topic_result_name(results[i])) + ": " +
                        rd_kafka_topic_result_error_string(results[i]);
                ok = false;
            }
        }
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(newTopics.data(), newTopics.size());
    rd_kafka_destroy(rk);
    return ok;
}

KafkaPartitionReader::KafkaPartitionReader(rd_kafka_t* rk) : m_rk(rk) {}
KafkaPartitionReader::~KafkaPartitionReader() {
    closeConsumer(m_rk);
}

std::unique_ptr<KafkaPartitionReader> KafkaPartitionReader::create(const KafkaSettings& s,
                                                                   std::string& error) {
    rd_kafka_t* rk = makeManualConsumer(s, error);
    if (!rk)
        return nullptr;
    return std::unique_ptr<KafkaPartitionReader>(new KafkaPartitionReader(rk));
}

namespace {

// The topic's partition ids (a topic created a moment ago takes a little
// while to show in metadata); false with the error.
bool partitionsOf(rd_kafka_t* rk, const std::string& topic, std::vector<std::int32_t>& ids,
                  std::string& error) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int tries = 0; tries < 60; ++tries) {
        if (md)
            rd_kafka_metadata_destroy(md);
        md = nullptr;
        e = rd_kafka_metadata(rk, 0, t, &md, 10'000);
        if (!e && md && md->topic_cnt == 1 && !md->topics[0].err)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    rd_kafka_topic_destroy(t);
    const bool ok = !e && md && md->topic_cnt == 1 && !md->topics[0].err;
    if (!ok)
        error = "metadata of topic " + topic + ": " +
                rd_kafka_err2str(e ? e : (md && md->topic_cnt ? md->topics[0].err : e));
    for (int i = 0; ok && i < md->topics[0].partition_cnt; ++i)
        ids.push_back(md->topics[0].partitions[i].id);
    if (md)
        rd_kafka_metadata_destroy(md);
    return ok;
}

// A partition's low and high watermarks (its leader may not be there yet
// just after the topic was made); false with the error.
bool watermarks(rd_kafka_t* rk, const std::string& topic, std::int32_t partition, std::int64_t& low,
                std::int64_t& high, std::string& error) {
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int tries = 0; tries < 60; ++tries) {
        e = rd_kafka_query_watermark_offsets(rk, topic.c_str(), partition, &low, &high, 10'000);
        if (!e)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    error = "end offset of " + topic + ": " + rd_kafka_err2str(e);
    return false;
}

} // namespace

bool KafkaPartitionReader::assignWholeTopic(const std::string& topic, bool fromEnd,
                                            std::string& error) {
    std::vector<std::int32_t> ids;
    if (!partitionsOf(m_rk, topic, ids, error))
        return false;
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(ids.size()));
    for (const std::int32_t p : ids) {
        std::int64_t low = 0, high = 0;
        // An explicit offset (not the logical END), so nothing produced after
        // this call can be skipped while the fetcher starts.
        if (fromEnd && !watermarks(m_rk, topic, p, low, high, error)) {
            rd_kafka_topic_partition_list_destroy(list);
            return false;
        }
        rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
            fromEnd ? high : RD_KAFKA_OFFSET_BEGINNING;
    }
    const rd_kafka_resp_err_t e = rd_kafka_assign(m_rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (e) {
        error = "assign " + topic + ": " + rd_kafka_err2str(e);
        return false;
    }
    return true;
}

bool KafkaPartitionReader::endOffsets(const std::string& topic,
                                      std::map<std::int32_t, std::int64_t>& ends,
                                      std::string& error) {
    std::vector<std::int32_t> ids;
    if (!partitionsOf(m_rk, topic, ids, error))
        return false;
    for (const std::int32_t p : ids) {
        std::int64_t low = 0, high = 0;
        if (!watermarks(m_rk, topic, p, low, high, error))
            return false;
        if (high > low)
            ends[p] = high;
    }
    return true;
}

std::vector<KafkaMessage> KafkaPartitionReader::poll(int timeoutMs, std::size_t maxMessages) {
    std::vector<KafkaMessage> out;
    int wait = timeoutMs;
    while (out.size() < maxMessages) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(m_rk, wait);
        if (!m)
            break;
        wait = 0;
        if (!m->err) {
            KafkaMessage km;
            km.topic = rd_kafka_topic_name(m->rkt);
            km.partition = m->partition;
            km.offset = m->offset;
            rd_kafka_timestamp_type_t tt;
            km.timestampMs = rd_kafka_message_timestamp(m, &tt);
            if (m->key)
                km.key.assign(static_cast<const char*>(m->key), m->key_len);
            if (m->payload)
                km.value.assign(static_cast<const char*>(m->payload), m->len);
            out.push_back(std::move(km));
        }
        rd_kafka_message_destroy(m);
    }
    return out;
}

} // namespace callscope
