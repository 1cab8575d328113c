// `callscope sim --bulk-calls N`: history written at once (see bulk_fill.h).
// Each healthy call leaves what the live simulator leaves for one: a SUCCESS
// record and an EXECUTED attempt row, a SUCCESS receipt, and the caller's
// INITIATED, AWAITING_RESPONSE and CONFIRMED_SUCCESS. A key rotation is the
// classic incident: the first callId times out and is confirmed FAILED, the
// same request comes back under a new callId, and both execute.
#include "sim/bulk_fill.h"

#include "connectors/secrets.h"
#include "models/anomaly_json.h"
#include "models/json_writer.h"
#include "models/timestamp.h"
#include "sim/kafka_writer.h"
#include "sim/sim_context.h"
#include "sim/sim_setup.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <random>
#include <tuple>

namespace callscope {
namespace {

struct BulkCall {
    std::string callId, digest, bizNo, traceId, caller, server;
    EpochMillis start = 0;   // INITIATED
    EpochMillis arrived = 0; // the attempt reached the server
    EpochMillis finished = 0;
    bool timedOut = false; // the caller gave up at arrived + timeout (a key rotation's first call)
};

std::string callerJson(const BulkCall& c, CallerState s, EpochMillis at, int attempt) {
    JsonWriter j;
    j.object()
        .field("callId", c.callId)
        .field("state", toString(s))
        .field("at", formatIsoMillis(at))
        .field("instance", c.caller)
        .field("attempt", attempt)
        .field("bizNo", c.bizNo)
        .field("requestDigest", c.digest)
        .field("traceId", c.traceId)
        .end();
    return j.take();
}

std::string receiptJson(const BulkCall& c) {
    JsonWriter j;
    j.object()
        .field("callId", c.callId)
        .field("status", toString(RecordStatus::Success))
        .field("resultRef",
               "result-store/" + formatIsoMillis(c.finished).substr(0, 10) + "/" + c.callId)
        .field("finishedAt", formatIsoMillis(c.finished))
        .field("version", 2)
        .field("sourceInstance", c.server)
        .field("requestDigest", c.digest)
        .end();
    return j.take();
}

class Filler {
public:
    Filler(const Config& config, const SimOptions& opt, const std::string& callerTopic,
           KafkaProducer& producer)
        : m_opt(opt), m_callerTopic(callerTopic), m_producer(producer),
          m_recordConn(config.postgres.dsn), m_attemptConn(config.postgres.dsn),
          m_orderConn(config.postgres.dsn), m_recordWork(m_recordConn),
          m_attemptWork(m_attemptConn), m_orderWork(m_orderConn),
          m_records(m_recordWork, "idempotent_record",
                    std::vector<std::string>{"call_id", "request_digest", "status", "first_source",
                                             "lock_version", "created_at", "updated_at",
                                             "expire_at"}),
          m_attempts(m_attemptWork, "idempotent_attempt",
                     std::vector<std::string>{"call_id", "request_digest", "source_instance",
                                              "trace_id", "outcome", "arrived_at", "finished_at"}),
          m_orders(m_orderWork, "callscope_sim_orders",
                   std::vector<std::string>{"order_no", "call_id"}),
          m_rng(opt.seed) {}

    // Writes one call: its rows into the COPY streams, its messages to Kafka.
    bool add(const BulkCall& c, SimStats& stats) {
        const EpochMillis created = c.arrived;
        m_records << std::make_tuple(c.callId, c.digest, std::string("SUCCESS"), c.caller, 0,
                                     formatIsoMillis(created), formatIsoMillis(c.finished),
                                     formatIsoMillis(created + m_opt.recordTtl.count()));
        m_attempts << std::make_tuple(c.callId, c.digest, c.caller, c.traceId,
                                      std::string("EXECUTED"), formatIsoMillis(c.arrived),
                                      formatIsoMillis(c.finished));
        // The business row, once per bizNo (a key rotation's retry follows its
        // original and writes none: the order exists).
        if (c.bizNo != m_lastBizNo)
            m_orders << std::make_tuple(c.bizNo, c.callId);
        m_lastBizNo = c.bizNo;
        std::string error;
        const auto send = [&](const std::string& topic, const std::string& json, EpochMillis t) {
            if (!m_producer.produce(topic, c.callId, json, error, t)) {
                m_error = "Kafka: " + error;
                return false;
            }
            return true;
        };
        if (!send(m_opt.receiptTopic, receiptJson(c), c.finished + 3))
            return false;
        stats.receiptsPublished++;
        stats.attempts++;
        stats.calls++;
        if (m_callerTopic.empty())
            return true;
        const auto state = [&](CallerState s, EpochMillis at, int attempt) {
            stats.callerEvents++;
            return send(m_callerTopic, callerJson(c, s, at, attempt), at);
        };
        if (!state(CallerState::Initiated, c.start, 0) ||
            !state(CallerState::AwaitingResponse, c.start + 1, 1))
            return false;
        if (c.timedOut) {
            const EpochMillis gaveUp = c.arrived + m_opt.requestTimeout.count();
            stats.timeouts++;
            return state(CallerState::TimeoutUnknown, gaveUp, 1) &&
                   state(CallerState::ConfirmedFailed, gaveUp + 1, 1);
        }
        return state(CallerState::ConfirmedSuccess, c.finished + 8, 1);
    }

    // The tables commit once every row is in (a connection per COPY).
    void finish() {
        m_records.complete();
        m_attempts.complete();
        m_orders.complete();
        m_recordWork.commit();
        m_attemptWork.commit();
        m_orderWork.commit();
    }

    std::mt19937_64& rng() { return m_rng; }
    const std::string& error() const { return m_error; }

private:
    const SimOptions& m_opt;
    std::string m_callerTopic;
    KafkaProducer& m_producer;
    pqxx::connection m_recordConn, m_attemptConn, m_orderConn;
    pqxx::work m_recordWork, m_attemptWork, m_orderWork;
    pqxx::stream_to m_records, m_attempts, m_orders;
    std::string m_lastBizNo;
    std::mt19937_64 m_rng;
    std::string m_error;
};

} // namespace

SimResult runBulkFill(const Config& config, const SimOptions& opt, const BulkFillOptions& bulk,
                      const std::atomic<bool>* stop) {
    SimResult result;
    for (const auto& [kind, rate] : opt.faults)
        if (rate > 0 && kind != AnomalyKind::KeyRotation) {
            result.error = "--bulk-calls injects key_rotation only (" +
                           std::string(toString(kind)) + " needs the live simulator)";
            result.refused = true;
            return result;
        }
    const std::string callerTopic =
        opt.callerTopic.empty() ? config.kafka.callerTopics : opt.callerTopic;
    if (!callerTopic.empty() && callerTopic.front() == '^') {
        result.error = "the caller topic is a pattern (" + callerTopic +
                       "); name one topic with --caller-topic";
        return result;
    }
    if (!sim::prepareTargets(config, opt, callerTopic, result))
        return result;
    KafkaSettings ks{config.kafka.brokers, config.kafka.properties, config.kafka.partitioner};
    // Throughput over latency: bigger batches, compressed on the wire and on disk.
    ks.properties.emplace("linger.ms", "50");
    ks.properties.emplace("batch.num.messages", "10000");
    ks.properties.emplace("queue.buffering.max.messages", "1000000");
    auto producer = KafkaProducer::create(ks, result.error);
    if (!producer)
        return result;

    const auto it = opt.faults.find(AnomalyKind::KeyRotation);
    const double rotationRate = it == opt.faults.end() ? 0.0 : it->second;
    std::vector<AnomalyLine> truth;
    try {
        Filler filler(config, opt, callerTopic, *producer);
        auto& rng = filler.rng();
        std::string runId;
        {
            std::mt19937_64 r(opt.seed ^ static_cast<std::uint64_t>(nowMillis()));
            runId = sim::randomHex(r, 6);
        }
        std::uniform_real_distribution<double> u(0, 1);
        const EpochMillis end = nowMillis() - 5 * 60'000;
        const EpochMillis begin = end - bulk.span.count();
        const double step =
            double(bulk.span.count()) / double(std::max<std::int64_t>(1, bulk.calls));
        std::int64_t seq = 0;
        const auto newCall = [&](EpochMillis start, int callerIndex) {
            BulkCall c;
            c.callId = "cid-" + runId + "-" + std::to_string(callerIndex + 1) + "-" +
                       std::to_string(++seq) + sim::randomHex(rng, 4);
            c.digest = sim::randomHex(rng, 64);
            c.bizNo = "ORD-" + runId + "-" + std::to_string(seq);
            c.traceId = sim::randomHex(rng, 16);
            c.caller = "order-api-" + std::to_string(callerIndex + 1);
            c.server = "pay-svc-" + std::to_string(1 + static_cast<int>(rng() % opt.servers));
            c.start = start;
            c.arrived = start + 2;
            c.finished = c.arrived + 5 + static_cast<EpochMillis>(rng() % 120);
            return c;
        };
        for (std::int64_t i = 0; i < bulk.calls; ++i) {
            if (stop && stop->load())
                break;
            const int callerIndex = static_cast<int>(i % opt.callers);
            BulkCall c = newCall(begin + static_cast<EpochMillis>(double(i) * step), callerIndex);
            if (u(rng) < rotationRate) {
                // Slow enough to outlive the caller's timeout; retried under a new key.
                c.timedOut = true;
                c.finished = c.arrived + opt.requestTimeout.count() + 300;
                BulkCall retry = newCall(c.arrived + opt.requestTimeout.count() + 2, callerIndex);
                retry.digest = c.digest;
                retry.bizNo = c.bizNo;
                if (!filler.add(c, result.stats) || !filler.add(retry, result.stats))
                    break;
                AnomalyLine kr;
                kr.kind = AnomalyKind::KeyRotation;
                kr.severity = Severity::Critical;
                kr.callIds = {retry.callId, c.callId};
                kr.digests = {c.digest};
                kr.instances = {c.caller};
                kr.firstEventAt = c.start;
                kr.cause = std::string(toString(Cause::KeyRotatedAfterTimeout));
                kr.summary = "injected: timed-out call retried under a new callId; both executed";
                AnomalyLine sm = kr;
                sm.kind = AnomalyKind::StateMismatch;
                sm.callIds = {c.callId};
                sm.cause.clear();
                sm.summary = "injected (follows key_rotation): caller confirmed FAILED, the "
                             "server executed it";
                truth.push_back(std::move(kr));
                truth.push_back(std::move(sm));
                result.stats.injected[AnomalyKind::KeyRotation]++;
                result.stats.injected[AnomalyKind::StateMismatch]++;
                continue;
            }
            if (!filler.add(c, result.stats))
                break;
        }
        if (!filler.error().empty()) {
            result.error = filler.error();
            return result;
        }
        filler.finish();
    } catch (const std::exception& e) {
        result.error = "PostgreSQL: " + scrubSecrets(e.what(), secretValues(config));
        return result;
    }
    if (!producer->flush(120'000) || producer->deliveryFailures() > 0) {
        result.error =
            std::to_string(producer->deliveryFailures()) + " messages were not delivered to Kafka";
        return result;
    }
    if (!writeTruthFile(opt.truthPath, truth, result.error))
        return result;
    result.ok = true;
    return result;
}

} // namespace callscope
