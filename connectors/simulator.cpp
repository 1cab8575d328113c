#include "connectors/simulator.h"

#include "connectors/kafka_client.h"
#include "connectors/secrets.h"
#include "connectors/sim_schema.h"
#include "models/anomaly_json.h"
#include "models/timestamp.h"

#include <QCryptographicHash>
#include <pqxx/pqxx>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <iostream>
#include <mutex>
#include <queue>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <variant>

namespace callscope {
namespace {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

// What a caller injects into one business action.
enum class Fault : std::uint8_t {
    None,
    Crash, // healthy: server dies after its placeholder, a later retry re-occupies
    Stuck,
    DigestConflict,
    DuplicateCaller,
    KeyRotation,
    ConcurrentExecution,
    ExpiredReplay,
    ReceiptMissing,
    StateMismatch,
    ReceiptRegression,
    CallerStuck,
    OrphanReceipt,
};

Fault faultFor(AnomalyKind k) {
    switch (k) {
    case AnomalyKind::StuckProcessing: return Fault::Stuck;
    case AnomalyKind::DigestConflict: return Fault::DigestConflict;
    case AnomalyKind::DuplicateCaller: return Fault::DuplicateCaller;
    case AnomalyKind::KeyRotation: return Fault::KeyRotation;
    case AnomalyKind::ConcurrentExecution: return Fault::ConcurrentExecution;
    case AnomalyKind::ExpiredReplay: return Fault::ExpiredReplay;
    case AnomalyKind::ReceiptMissing: return Fault::ReceiptMissing;
    case AnomalyKind::StateMismatch: return Fault::StateMismatch;
    case AnomalyKind::ReceiptRegression: return Fault::ReceiptRegression;
    case AnomalyKind::CallerStuck: return Fault::CallerStuck;
    case AnomalyKind::OrphanReceipt: return Fault::OrphanReceipt;
    }
    return Fault::None;
}

std::string sha256Hex(const std::string& text) {
    const QByteArray h = QCryptographicHash::hash(QByteArray::fromStdString(text),
                                                  QCryptographicHash::Sha256);
    return h.toHex().toStdString();
}

std::string randomHex(std::mt19937_64& rng, int chars) {
    static const char* digits = "0123456789abcdef";
    std::string s(chars, '0');
    for (auto& c : s)
        c = digits[rng() & 15];
    return s;
}

// ---- messages between the simulated parts ---------------------------------

struct Request {
    std::string callId, digest, source, traceId;
    int attempt = 0;      // the caller's send number; 0 = nobody reads the answer
    int callerIndex = -1; // -1 = nobody to answer
    int processingMs = 10;
    bool businessFails = false;
    bool dieAfterPlaceholder = false;
    bool brokenPlaceholder = false; // check-then-act bug: the placeholder is not atomic
    bool dropReceipt = false;       // the relay loses the terminal receipt
    bool wrongReceipt = false;      // the relay publishes the opposite terminal status
    bool orphanReceiptOnly = false; // publish a receipt for a callId with no record
    std::int64_t ttlMs = 0;
    // The server, which sees what really happened, records these faults:
    bool truthOnOverlap = false; // concurrent_execution: this run overlapped a running one
    bool truthOnExecute = false; // expired_replay: this retry executed again
    EpochMillis initiatedAt = 0;
};

enum class ResponseKind : std::uint8_t { Done, InProgress, Rejected };

struct Response {
    std::string callId;
    int attempt = 0;
    ResponseKind kind = ResponseKind::Done;
    RecordStatus status = RecordStatus::Success;
};

struct ReceiptNote {
    std::string callId;
    int version = 0;
    RecordStatus status = RecordStatus::Processing;
};

using CallerMessage = std::variant<Response, ReceiptNote>;

class SimCaller;
class SimServer;

// Everything the parts share: settings, Kafka producer, truth, counters.
struct SimContext {
    const Config& config;
    const SimOptions& opt;
    std::string callerTopic;
    std::string runId;
    KafkaProducer* producer = nullptr;
    std::vector<std::unique_ptr<SimServer>> servers;
    std::vector<std::unique_ptr<SimCaller>> callers;

    std::mutex mutex; // guards the members below
    std::unordered_map<std::string, int> callOwner; // callId -> caller index
    std::vector<AnomalyLine> truth;
    std::set<std::string> truthKeys;
    std::string failure;
    SimStats stats;

    std::atomic<std::int64_t> attempts{0}, callerEvents{0}, receiptsPublished{0},
        receiptsDuplicated{0}, receiptsDropped{0}, receiptsSeen{0};
    std::atomic<bool> failed{false};
    std::atomic<std::uint64_t> serverPick{0};

    // A server stamps arrived_at, then inserts the placeholder. Two attempts
    // of one callId on a loaded machine could commit in the other order, and
    // the record's created_at would be later than an attempt that came first:
    // data that says "an earlier incarnation" (expired_replay) where none was
    // injected. Stamp and placeholder are one step per callId (striped locks).
    std::array<std::mutex, 64> arrivalLocks;
    std::mutex& arrivalLock(const std::string& callId) {
        return arrivalLocks[std::hash<std::string>{}(callId) % arrivalLocks.size()];
    }

    SimContext(const Config& c, const SimOptions& o) : config(c), opt(o) {}

    void fail(const std::string& why) {
        std::lock_guard lock(mutex);
        if (failure.empty())
            failure = scrubSecrets(why, secretValues(config)); // libpq's texts may quote the DSN
        failed = true;
    }
    void addTruth(AnomalyLine line) {
        line.detectedAt = nowMillis();
        std::lock_guard lock(mutex);
        std::string key(toString(line.kind));
        for (const auto& id : line.callIds)
            key += "," + id;
        if (!truthKeys.insert(key).second)
            return; // already recorded (a second overlap of the same call)
        stats.injected[line.kind]++;
        truth.push_back(std::move(line));
    }
    void publishEvent(const std::string& key, const std::string& json) {
        if (callerTopic.empty())
            return;
        std::string err;
        if (!producer->produce(callerTopic, key, json, err))
            fail("producing a caller event: " + err);
        callerEvents++;
    }
    void submit(Request r);
    void deliver(int callerIndex, CallerMessage m);
};

// ---- server ----------------------------------------------------------------

class SimServer {
public:
    SimServer(SimContext& ctx, std::string name, int workers)
        : m_ctx(ctx), m_name(std::move(name)), m_workers(workers) {}

    void start() {
        for (int i = 0; i < m_workers; ++i)
            m_threads.emplace_back([this] { workerLoop(); });
    }
    void submit(Request r) {
        {
            std::lock_guard lock(m_mutex);
            m_queue.push_back(std::move(r));
        }
        m_cv.notify_one();
    }
    // Finishes what is queued, then stops.
    void stop() {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_cv.notify_all();
        for (auto& t : m_threads)
            t.join();
        m_threads.clear();
    }

private:
    void workerLoop() {
        std::unique_ptr<pqxx::connection> conn;
        try {
            conn = std::make_unique<pqxx::connection>(m_ctx.config.postgres.dsn);
            prepare(*conn);
        } catch (const std::exception& e) {
            m_ctx.fail(m_name + ": cannot connect to PostgreSQL: " + e.what());
        }
        for (;;) {
            Request r;
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
                if (m_queue.empty())
                    return;
                r = std::move(m_queue.front());
                m_queue.pop_front();
            }
            if (!conn)
                continue;
            try {
                handle(*conn, r);
            } catch (const std::exception& e) {
                m_ctx.fail(m_name + ": " + e.what());
            }
        }
    }

    static void prepare(pqxx::connection& c) {
        c.prepare("placeholder",
                  "INSERT INTO idempotent_record (call_id, request_digest, status, first_source, "
                  "lock_version, created_at, updated_at, expire_at) VALUES ($1, $2, 'PROCESSING', "
                  "$3, 0, $4::timestamptz, $4::timestamptz, $5::timestamptz) "
                  "ON CONFLICT (call_id) DO NOTHING RETURNING lock_version");
        // The bug behind concurrent_execution: the "placeholder" overwrites a
        // record still PROCESSING instead of failing on the unique key, so a
        // retry executes while the first execution runs. A finished record is
        // answered as usual: a retry that comes late (a loaded machine) is a
        // replay, never an unlabelled second execution.
        c.prepare("broken_placeholder",
                  "INSERT INTO idempotent_record (call_id, request_digest, status, first_source, "
                  "lock_version, created_at, updated_at, expire_at) VALUES ($1, $2, 'PROCESSING', "
                  "$3, 0, $4::timestamptz, $4::timestamptz, $5::timestamptz) "
                  "ON CONFLICT (call_id) DO UPDATE SET updated_at = EXCLUDED.updated_at "
                  "WHERE idempotent_record.status = 'PROCESSING' "
                  "RETURNING lock_version, status, (xmax::text <> '0')");
        c.prepare("lock_record",
                  "SELECT request_digest, status, lock_version, "
                  "(extract(epoch from updated_at) * 1000)::bigint "
                  "FROM idempotent_record WHERE call_id = $1 FOR UPDATE");
        c.prepare("reoccupy",
                  "UPDATE idempotent_record SET lock_version = lock_version + 1, "
                  "updated_at = $2::timestamptz WHERE call_id = $1 RETURNING lock_version");
        c.prepare("attempt",
                  "INSERT INTO idempotent_attempt (call_id, request_digest, source_instance, "
                  "trace_id, outcome, arrived_at, finished_at) VALUES ($1, $2, $3, $4, $5, "
                  "$6::timestamptz, NULLIF($7, '')::timestamptz) RETURNING id");
        c.prepare("finish_record",
                  "UPDATE idempotent_record SET status = $2, result_snapshot = $3, "
                  "updated_at = $4::timestamptz WHERE call_id = $1 AND lock_version = $5");
        c.prepare("finish_attempt",
                  "UPDATE idempotent_attempt SET finished_at = $2::timestamptz WHERE id = $1");
        c.prepare("outbox", "INSERT INTO callscope_sim_outbox (call_id, payload, fault) "
                            "VALUES ($1, $2, NULLIF($3, ''))");
    }

    std::string receiptJson(const Request& r, RecordStatus status, int version,
                            EpochMillis finishedAt) const {
        std::string j = R"({"callId":)" + jsonQuote(r.callId) + R"(,"status":)" +
                        jsonQuote(toString(status));
        if (status != RecordStatus::Processing) {
            j += R"(,"resultRef":)" +
                 jsonQuote("result-store/" + formatIsoMillis(finishedAt).substr(0, 10) + "/" +
                           r.callId) +
                 R"(,"finishedAt":)" + jsonQuote(formatIsoMillis(finishedAt));
        }
        j += R"(,"version":)" + std::to_string(version) + R"(,"sourceInstance":)" +
             jsonQuote(m_name) + R"(,"requestDigest":)" + jsonQuote(r.digest) + "}";
        return j;
    }

    void recordAttempt(pqxx::work& w, const Request& r, AttemptOutcome o, const std::string& at,
                       const std::string& finished, std::int64_t* id = nullptr) {
        const pqxx::result res =
            w.exec_prepared("attempt", r.callId, r.digest, r.source, r.traceId,
                            std::string(toString(o)), at, finished);
        if (id)
            *id = res[0][0].as<std::int64_t>();
        m_ctx.attempts++;
    }

    static AnomalyLine truthLine(const Request& r, AnomalyKind kind, std::string summary) {
        AnomalyLine a;
        a.kind = kind;
        a.severity = Severity::Critical;
        a.callIds = {r.callId};
        a.instances = {r.source};
        a.digests = {r.digest};
        a.firstEventAt = r.initiatedAt;
        a.summary = std::move(summary);
        return a;
    }

    void answer(const Request& r, ResponseKind kind, RecordStatus status) {
        if (r.callerIndex >= 0 && r.attempt > 0)
            m_ctx.deliver(r.callerIndex, Response{r.callId, r.attempt, kind, status});
    }

    void handle(pqxx::connection& c, Request& r) {
        if (r.orphanReceiptOnly) {
            pqxx::work w(c);
            w.exec_prepared("outbox", r.callId,
                            receiptJson(r, RecordStatus::Success, 2, nowMillis()), std::string());
            w.commit();
            return;
        }
        std::unique_lock arrival(m_ctx.arrivalLock(r.callId));
        const EpochMillis arrived = nowMillis();
        const std::string arrivedIso = formatIsoMillis(arrived);
        const std::int64_t ttl = r.ttlMs > 0 ? r.ttlMs : m_ctx.opt.recordTtl.count();
        int lockVersion = 0;
        bool overlapped = false;
        AttemptOutcome outcome;
        std::int64_t attemptId = 0;
        RecordStatus replayStatus = RecordStatus::Success;
        {
            pqxx::work w(c);
            const pqxx::result ins =
                w.exec_prepared(r.brokenPlaceholder ? "broken_placeholder" : "placeholder",
                                r.callId, r.digest, r.source, arrivedIso,
                                formatIsoMillis(arrived + ttl));
            if (!ins.empty()) {
                outcome = AttemptOutcome::Executed;
                lockVersion = ins[0][0].as<int>();
                // Overwrote a row still PROCESSING: two executions at once.
                overlapped = r.brokenPlaceholder && ins[0][2].as<bool>() &&
                             ins[0][1].as<std::string>() == "PROCESSING";
            } else {
                const pqxx::result cur = w.exec_prepared("lock_record", r.callId);
                if (cur.empty()) { // purged between the insert and the select: try again
                    w.abort();
                    arrival.unlock();
                    handle(c, r);
                    return;
                }
                const std::string digest = cur[0][0].as<std::string>();
                const auto status = recordStatusFromName(cur[0][1].as<std::string>());
                lockVersion = cur[0][2].as<int>();
                const std::int64_t updatedAt = cur[0][3].as<std::int64_t>();
                if (digest != r.digest) {
                    outcome = AttemptOutcome::DigestConflict;
                } else if (status && isTerminal(*status)) {
                    outcome = AttemptOutcome::Replayed;
                    replayStatus = *status;
                } else if (arrived - updatedAt > m_ctx.opt.staleTimeout.count()) {
                    lockVersion = w.exec_prepared("reoccupy", r.callId, arrivedIso)[0][0].as<int>();
                    outcome = AttemptOutcome::Reoccupied;
                } else {
                    outcome = AttemptOutcome::InProgress;
                }
            }
            const bool executes =
                outcome == AttemptOutcome::Executed || outcome == AttemptOutcome::Reoccupied;
            recordAttempt(w, r, outcome, arrivedIso, executes ? std::string() : arrivedIso,
                          &attemptId);
            if (executes)
                w.exec_prepared("outbox", r.callId,
                                receiptJson(r, RecordStatus::Processing, 2 * lockVersion + 1, 0),
                                std::string());
            w.commit();
        }
        arrival.unlock();
        if (overlapped && r.truthOnOverlap)
            m_ctx.addTruth(truthLine(r, AnomalyKind::ConcurrentExecution,
                                     "injected: non-atomic placeholder, a retry executed while "
                                     "the first execution was still running"));
        if (r.truthOnExecute && outcome == AttemptOutcome::Executed)
            m_ctx.addTruth(truthLine(r, AnomalyKind::ExpiredReplay,
                                     "injected: retry after the record expired and was purged; "
                                     "executed again"));
        switch (outcome) {
        case AttemptOutcome::DigestConflict:
            answer(r, ResponseKind::Rejected, RecordStatus::Failed);
            return;
        case AttemptOutcome::Replayed:
            answer(r, ResponseKind::Done, replayStatus);
            return;
        case AttemptOutcome::InProgress:
            answer(r, ResponseKind::InProgress, RecordStatus::Processing);
            return;
        default:
            break;
        }
        if (r.dieAfterPlaceholder)
            return; // the process died: no result, no receipt, no answer
        std::this_thread::sleep_for(std::chrono::milliseconds(r.processingMs));
        const RecordStatus result = r.businessFails ? RecordStatus::Failed : RecordStatus::Success;
        const EpochMillis finished = nowMillis();
        const std::string finishedIso = formatIsoMillis(finished);
        {
            pqxx::work w(c);
            const std::string snapshot =
                R"({"callId":)" + jsonQuote(r.callId) + R"(,"result":)" +
                jsonQuote(result == RecordStatus::Success ? "approved" : "declined") +
                R"(,"account":"DE89 3704 0044 0532 0130 00","amountCents":)" +
                std::to_string(100 + (std::hash<std::string>{}(r.callId) % 100000)) + "}";
            w.exec_prepared("finish_record", r.callId, std::string(toString(result)), snapshot,
                            finishedIso, lockVersion);
            w.exec_prepared("finish_attempt", attemptId, finishedIso);
            RecordStatus published = result;
            std::string fault;
            if (r.wrongReceipt)
                published = result == RecordStatus::Success ? RecordStatus::Failed
                                                            : RecordStatus::Success;
            if (r.dropReceipt)
                fault = "drop";
            w.exec_prepared("outbox", r.callId,
                            receiptJson(r, published, 2 * lockVersion + 2, finished), fault);
            w.commit();
        }
        answer(r, ResponseKind::Done, result);
    }

    SimContext& m_ctx;
    std::string m_name;
    int m_workers;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Request> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

void SimContext::submit(Request r) {
    const auto i = serverPick.fetch_add(1) % servers.size();
    servers[i]->submit(std::move(r));
}

// ---- caller ----------------------------------------------------------------

class SimCaller {
public:
    SimCaller(SimContext& ctx, int index)
        : m_ctx(ctx), m_index(index), m_name("order-api-" + std::to_string(index + 1)),
          m_rng(ctx.opt.seed * 7919 + static_cast<std::uint64_t>(index)) {}

    const std::string& name() const { return m_name; }

    void post(CallerMessage m) {
        {
            std::lock_guard lock(m_mutex);
            m_inbox.push_back(std::move(m));
        }
        m_cv.notify_one();
    }

    // The caller's life: start business actions at its share of the rate
    // until `end`, then finish the calls it has open.
    std::int64_t run(SteadyTime end, SteadyTime drainEnd, const std::atomic<bool>* stop) {
        const double perSecond = m_ctx.opt.rate / m_ctx.opt.callers;
        std::exponential_distribution<double> gap(perSecond > 0 ? perSecond : 1.0);
        SteadyTime nextNew = SteadyClock::now();
        for (;;) {
            const SteadyTime now = SteadyClock::now();
            const bool stopped = (stop && *stop) || m_ctx.failed;
            const bool generating = !stopped && now < end && perSecond > 0;
            while (generating && nextNew <= now) {
                startCall();
                nextNew += std::chrono::microseconds(static_cast<std::int64_t>(gap(m_rng) * 1e6));
            }
            while (!m_timers.empty() && m_timers.top().due <= now) {
                Timer t = m_timers.top();
                m_timers.pop();
                onTimer(t);
            }
            std::deque<CallerMessage> inbox;
            {
                std::lock_guard lock(m_mutex);
                inbox.swap(m_inbox);
            }
            for (auto& m : inbox)
                std::visit([this](auto& msg) { onMessage(msg); }, m);
            if (!generating && (m_calls.empty() || stopped || now >= drainEnd))
                return static_cast<std::int64_t>(m_calls.size());
            SteadyTime wake = now + std::chrono::milliseconds(50);
            if (generating)
                wake = std::min(wake, nextNew);
            if (!m_timers.empty())
                wake = std::min(wake, m_timers.top().due);
            std::unique_lock lock(m_mutex);
            m_cv.wait_until(lock, wake, [&] { return !m_inbox.empty(); });
        }
    }

private:
    enum class TimerKind : std::uint8_t { ResponseTimeout, Retry, Escalate, FollowUp };
    struct Timer {
        SteadyTime due;
        std::string callId;
        TimerKind kind;
        int attempt;
        bool operator<(const Timer& o) const { return due > o.due; } // min-heap
    };
    struct Call {
        std::string callId, bizNo, digest, traceId;
        Fault fault = Fault::None;
        CallerState state = CallerState::Initiated;
        int attempt = 0;           // sends so far
        bool awaitingAnswer = false;
        int highestVersion = 0;
        bool businessFails = false;
        bool ignoreReceipts = false;
        bool terminal = false;     // confirmed or escalated
        int followUps = 0;         // fault steps still to come
        EpochMillis initiatedAt = 0;
        std::string siblingCallId; // key rotation: the callId of the new-key retry
    };

    // -- starting a business action --
    Fault drawFault() {
        std::uniform_real_distribution<double> u(0.0, 1.0);
        double x = u(m_rng);
        for (const auto& [kind, rate] : m_ctx.opt.faults) {
            if (x < rate)
                return faultFor(kind);
            x -= rate;
        }
        if (x < m_ctx.opt.crashRate)
            return Fault::Crash;
        return Fault::None;
    }

    std::string newCallId() {
        return "cid-" + m_ctx.runId + "-" + std::to_string(m_index + 1) + "-" +
               std::to_string(++m_seq) + randomHex(m_rng, 4);
    }

    void startCall() {
        Call call;
        call.fault = drawFault();
        call.callId = newCallId();
        call.bizNo = "ORD-" + m_ctx.runId + "-" + std::to_string(m_index + 1) + "-" +
                     std::to_string(m_seq);
        const int amount = std::uniform_int_distribution<int>(100, 999'999)(m_rng);
        call.digest = sha256Hex(call.bizNo + "|EUR|" + std::to_string(amount) + "|" + m_name);
        call.traceId = randomHex(m_rng, 16);
        call.initiatedAt = nowMillis();
        call.businessFails =
            call.fault == Fault::None && std::uniform_real_distribution<double>(0, 1)(m_rng) < 0.05;
        {
            std::lock_guard lock(m_ctx.mutex);
            m_ctx.stats.calls++;
            m_ctx.callOwner[call.callId] = m_index;
        }
        if (call.fault == Fault::OrphanReceipt) {
            // A receipt for a callId that no server ever recorded.
            Request r;
            r.callId = call.callId;
            r.digest = call.digest;
            r.orphanReceiptOnly = true;
            m_ctx.submit(std::move(r));
            m_ctx.addTruth(line(AnomalyKind::OrphanReceipt, Severity::Info, call, {}, {},
                                "injected: receipt for a callId with no record"));
            return;
        }
        Call& c = m_calls.emplace(call.callId, std::move(call)).first->second;
        publishState(c, CallerState::Initiated);
        send(c);
    }

    // -- the protocol --
    int processingMsFor(const Call& c, int attempt) {
        const int timeout = static_cast<int>(m_ctx.opt.requestTimeout.count());
        switch (c.fault) {
        case Fault::KeyRotation:
        case Fault::CallerStuck:
            return attempt == 1 ? timeout + 300 : 20;
        case Fault::ConcurrentExecution:
            return attempt == 1 ? timeout + 1500 : 20;
        case Fault::ExpiredReplay:
            return attempt == 1 ? timeout + 100 : 20;
        case Fault::ReceiptMissing:
        case Fault::StateMismatch:
        case Fault::DigestConflict:
        case Fault::DuplicateCaller:
        case Fault::ReceiptRegression:
            return 10;
        default:
            break;
        }
        // Healthy traffic: mostly fast, with a tail that outlives the timeout.
        std::uniform_real_distribution<double> u(0, 1);
        if (u(m_rng) < 0.03)
            return std::uniform_int_distribution<int>(timeout + 50, timeout * 2 + 100)(m_rng);
        return static_cast<int>(std::uniform_int_distribution<int>(5, 60)(m_rng) *
                                m_ctx.opt.workScale);
    }

    void send(Call& c) {
        c.attempt++;
        c.awaitingAnswer = true;
        publishState(c, CallerState::AwaitingResponse);
        Request r;
        r.callId = c.callId;
        r.digest = c.digest;
        r.source = m_name;
        r.traceId = c.traceId;
        r.attempt = c.attempt;
        r.callerIndex = m_index;
        r.processingMs = processingMsFor(c, c.attempt);
        r.businessFails = c.businessFails;
        const bool first = c.attempt == 1;
        r.dieAfterPlaceholder = first && (c.fault == Fault::Stuck || c.fault == Fault::Crash);
        r.brokenPlaceholder = c.fault == Fault::ConcurrentExecution;
        r.dropReceipt = c.fault == Fault::ReceiptMissing;
        r.wrongReceipt = c.fault == Fault::StateMismatch;
        if (first && c.fault == Fault::ExpiredReplay)
            r.ttlMs = 1000;
        r.truthOnOverlap = c.fault == Fault::ConcurrentExecution;
        r.truthOnExecute = !first && c.fault == Fault::ExpiredReplay;
        r.initiatedAt = c.initiatedAt;
        m_ctx.submit(std::move(r));
        schedule(c, TimerKind::ResponseTimeout, m_ctx.opt.requestTimeout.count(), c.attempt);
    }

    void onTimer(const Timer& t) {
        auto it = m_calls.find(t.callId);
        if (it == m_calls.end())
            return;
        Call& c = it->second;
        switch (t.kind) {
        case TimerKind::ResponseTimeout:
            if (c.terminal || !c.awaitingAnswer || t.attempt != c.attempt)
                return;
            onTimeout(c);
            break;
        case TimerKind::Retry:
            if (c.terminal)
                return;
            if (c.fault == Fault::ExpiredReplay || c.attempt < kMaxAttempts) {
                send(c);
            } else if (c.state != CallerState::AwaitingReceipt) {
                publishState(c, CallerState::AwaitingReceipt);
                schedule(c, TimerKind::Escalate, 4 * m_ctx.opt.staleTimeout.count(), 0);
            }
            break;
        case TimerKind::Escalate:
            if (c.terminal)
                return;
            publishState(c, CallerState::Escalated);
            c.terminal = true;
            if (c.fault == Fault::Stuck)
                m_ctx.addTruth(line(AnomalyKind::StuckProcessing, Severity::Warning, c, {}, {},
                                    "injected: server died after its placeholder; caller "
                                    "escalated"));
            break;
        case TimerKind::FollowUp:
            c.followUps--;
            followUp(c);
            break;
        }
        finishIfDone(c.callId);
    }

    void onTimeout(Call& c) {
        c.awaitingAnswer = false;
        {
            std::lock_guard lock(m_ctx.mutex);
            m_ctx.stats.timeouts++;
        }
        publishState(c, CallerState::TimeoutUnknown);
        switch (c.fault) {
        case Fault::KeyRotation: {
            // The classic bug: the timeout is taken as failure and the action
            // is retried under a new callId, so the server executes it twice.
            publishState(c, CallerState::ConfirmedFailed);
            c.terminal = true;
            Call retry;
            retry.callId = newCallId();
            retry.bizNo = c.bizNo;
            retry.digest = c.digest;
            retry.traceId = randomHex(m_rng, 16);
            retry.initiatedAt = nowMillis();
            {
                std::lock_guard lock(m_ctx.mutex);
                m_ctx.callOwner[retry.callId] = m_index;
            }
            AnomalyLine kr = line(AnomalyKind::KeyRotation, Severity::Critical, c, {retry.callId},
                                  {}, "injected: timed-out call retried under a new callId; "
                                      "both executed");
            AnomalyLine sm = line(AnomalyKind::StateMismatch, Severity::Critical, c, {}, {},
                                  "injected (follows key_rotation): caller confirmed FAILED, "
                                  "the server executed it");
            Call& r = m_calls.emplace(retry.callId, std::move(retry)).first->second;
            publishState(r, CallerState::Initiated);
            send(r);
            m_ctx.addTruth(std::move(kr));
            m_ctx.addTruth(std::move(sm));
            return;
        }
        case Fault::CallerStuck:
            publishState(c, CallerState::AwaitingReceipt);
            m_ctx.addTruth(line(AnomalyKind::CallerStuck, Severity::Warning, c, {}, {},
                                "injected: caller hung while awaiting the receipt"));
            c.terminal = true; // the caller process forgot the call: no more events
            c.ignoreReceipts = true;
            return;
        case Fault::ExpiredReplay:
            c.ignoreReceipts = true; // missed the receipt; retries after the record is purged
            schedule(c, TimerKind::Retry, 2500, 0);
            return;
        case Fault::Stuck:
            if (c.attempt >= 2) { // gave up retrying; waits, then escalates before stale
                publishState(c, CallerState::AwaitingReceipt);
                schedule(c, TimerKind::Escalate, m_ctx.opt.staleTimeout.count() / 4, 0);
                return;
            }
            break;
        case Fault::ConcurrentExecution:
            schedule(c, TimerKind::Retry, 100, 0);
            return;
        default:
            break;
        }
        schedule(c, TimerKind::Retry, 300, 0);
    }

    void onMessage(Response& m) {
        auto it = m_calls.find(m.callId);
        if (it == m_calls.end())
            return;
        Call& c = it->second;
        // An answer to an older send arrives on a connection the caller has closed.
        if (c.terminal || !c.awaitingAnswer || m.attempt != c.attempt)
            return;
        c.awaitingAnswer = false;
        switch (m.kind) {
        case ResponseKind::Done:
            confirm(c, m.status);
            break;
        case ResponseKind::Rejected:
            confirm(c, RecordStatus::Failed);
            break;
        case ResponseKind::InProgress:
            if (c.state != CallerState::AwaitingReceipt)
                publishState(c, CallerState::AwaitingReceipt);
            if (c.fault == Fault::Stuck) {
                schedule(c, TimerKind::Escalate, m_ctx.opt.staleTimeout.count() / 4, 0);
                return;
            }
            schedule(c, TimerKind::Retry, 1000, 0);
            break;
        }
        finishIfDone(c.callId);
    }

    void onMessage(ReceiptNote& m) {
        auto it = m_calls.find(m.callId);
        if (it == m_calls.end())
            return;
        Call& c = it->second;
        if (c.ignoreReceipts || c.terminal || m.version <= c.highestVersion)
            return; // duplicates, stale versions and anything after a terminal state
        c.highestVersion = m.version;
        if (isTerminal(m.status)) {
            if (c.state == CallerState::TimeoutUnknown)
                publishState(c, CallerState::AwaitingReceipt);
            confirm(c, m.status);
            finishIfDone(c.callId);
        }
    }

    void confirm(Call& c, RecordStatus s) {
        publishState(c, s == RecordStatus::Success ? CallerState::ConfirmedSuccess
                                           : CallerState::ConfirmedFailed);
        c.terminal = true;
        switch (c.fault) {
        case Fault::ReceiptMissing:
            m_ctx.addTruth(line(AnomalyKind::ReceiptMissing, Severity::Warning, c, {}, {},
                                "injected: the relay dropped the terminal receipt"));
            break;
        case Fault::StateMismatch:
            m_ctx.addTruth(line(AnomalyKind::StateMismatch, Severity::Critical, c, {}, {},
                                "injected: the receipt carries the opposite terminal status"));
            break;
        case Fault::DigestConflict:
        case Fault::DuplicateCaller:
        case Fault::ReceiptRegression:
            c.followUps++;
            schedule(c, TimerKind::FollowUp, 100, 0);
            break;
        default:
            break;
        }
    }

    void followUp(Call& c) {
        switch (c.fault) {
        case Fault::DigestConflict: {
            // A caller bug: the same callId reused for another request.
            Request r;
            r.callId = c.callId;
            r.digest = sha256Hex(c.bizNo + "|other-request|" + randomHex(m_rng, 8));
            r.source = m_name;
            r.traceId = randomHex(m_rng, 16);
            const std::string otherDigest = r.digest;
            m_ctx.submit(std::move(r));
            m_ctx.addTruth(line(AnomalyKind::DigestConflict, Severity::Warning, c, {}, {otherDigest},
                                "injected: callId reused with another request digest"));
            break;
        }
        case Fault::DuplicateCaller: {
            // Another instance picked up the same job and sent it again.
            const auto& others = m_ctx.callers;
            const std::string other =
                others.size() > 1 ? others[(m_index + 1) % others.size()]->name()
                                  : "order-api-shadow";
            Request r;
            r.callId = c.callId;
            r.digest = c.digest;
            r.source = other;
            r.traceId = randomHex(m_rng, 16);
            m_ctx.submit(std::move(r));
            m_ctx.addTruth(line(AnomalyKind::DuplicateCaller, Severity::Warning, c, {}, {},
                                "injected: a second caller instance sent the same callId", other));
            break;
        }
        case Fault::ReceiptRegression:
            // A caller bug: a confirmed call goes back to waiting for its receipt.
            publishState(c, CallerState::AwaitingReceipt);
            m_ctx.addTruth(line(AnomalyKind::ReceiptRegression, Severity::Warning, c, {}, {},
                                "injected: caller moved from a terminal to a non-terminal state"));
            break;
        default:
            break;
        }
    }

    void finishIfDone(const std::string& callId) {
        auto it = m_calls.find(callId);
        if (it != m_calls.end() && it->second.terminal && it->second.followUps == 0)
            m_calls.erase(it);
    }

    // -- helpers --
    void schedule(const Call& c, TimerKind kind, std::int64_t afterMs, int attempt) {
        m_timers.push(Timer{SteadyClock::now() + std::chrono::milliseconds(afterMs), c.callId,
                            kind, attempt});
    }

    void publishState(Call& c, CallerState s) {
        c.state = s;
        const std::string json =
            R"({"callId":)" + jsonQuote(c.callId) + R"(,"state":)" + jsonQuote(toString(s)) +
            R"(,"at":)" + jsonQuote(formatIsoMillis(nowMillis())) + R"(,"instance":)" +
            jsonQuote(m_name) + R"(,"attempt":)" + std::to_string(c.attempt) + R"(,"bizNo":)" +
            jsonQuote(c.bizNo) + R"(,"requestDigest":)" + jsonQuote(c.digest) +
            R"(,"traceId":)" + jsonQuote(c.traceId) + "}";
        m_ctx.publishEvent(c.callId, json);
    }

    AnomalyLine line(AnomalyKind kind, Severity sev, const Call& c,
                     std::vector<std::string> moreCallIds, std::vector<std::string> moreDigests,
                     std::string summary, std::string otherInstance = {}) const {
        AnomalyLine a;
        a.kind = kind;
        a.severity = sev;
        a.callIds = std::move(moreCallIds);
        a.callIds.push_back(c.callId);
        a.digests = std::move(moreDigests);
        a.digests.push_back(c.digest);
        if (kind != AnomalyKind::OrphanReceipt)
            a.instances.push_back(m_name);
        if (!otherInstance.empty())
            a.instances.push_back(otherInstance);
        a.firstEventAt = c.initiatedAt;
        a.summary = std::move(summary);
        return a;
    }

    static constexpr int kMaxAttempts = 6;

    SimContext& m_ctx;
    int m_index;
    std::string m_name;
    std::mt19937_64 m_rng;
    std::uint64_t m_seq = 0;
    std::unordered_map<std::string, Call> m_calls;
    std::priority_queue<Timer> m_timers;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<CallerMessage> m_inbox;
};

void SimContext::deliver(int callerIndex, CallerMessage m) {
    callers[static_cast<std::size_t>(callerIndex)]->post(std::move(m));
}

// ---- relay: outbox -> Kafka, at least once ----------------------------------

class OutboxRelay {
public:
    explicit OutboxRelay(SimContext& ctx) : m_ctx(ctx), m_rng(ctx.opt.seed ^ 0x5eedULL) {}

    // Publishes until told to stop, then until the outbox is empty.
    void run(const std::atomic<bool>& stopWhenEmpty) {
        try {
            pqxx::connection c(m_ctx.config.postgres.dsn);
            auto lastPurge = SteadyClock::now();
            for (;;) {
                if (SteadyClock::now() - lastPurge > std::chrono::milliseconds(250)) {
                    purgeExpired(c);
                    lastPurge = SteadyClock::now();
                }
                const int n = publishBatch(c);
                if (n == 0) {
                    if (stopWhenEmpty)
                        return;
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            }
        } catch (const std::exception& e) {
            m_ctx.fail(std::string("outbox relay: ") + e.what());
        }
    }

private:
    // Servers delete records whose idempotency window has passed.
    static void purgeExpired(pqxx::connection& c) {
        pqxx::work w(c);
        w.exec("DELETE FROM idempotent_record WHERE expire_at < " +
               w.quote(formatIsoMillis(nowMillis())) + "::timestamptz");
        w.commit();
    }

    int publishBatch(pqxx::connection& c) {
        pqxx::work w(c);
        const pqxx::result rows =
            w.exec("SELECT id, call_id, payload, COALESCE(fault, '') FROM callscope_sim_outbox "
                   "WHERE NOT published ORDER BY id LIMIT 500");
        if (rows.empty())
            return 0;
        std::vector<int> order(rows.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = static_cast<int>(i);
        std::uniform_real_distribution<double> u(0, 1);
        if (u(m_rng) < 0.3) // relays publish in parallel: receipts overtake each other
            std::shuffle(order.begin(), order.end(), m_rng);
        std::vector<int> again;
        std::string ids = "{";
        std::string err;
        for (const int i : order) {
            const auto row = rows[i];
            ids += (ids.size() > 1 ? "," : "") + row[0].as<std::string>();
            if (row[3].as<std::string>() == "drop") {
                m_ctx.receiptsDropped++;
                continue;
            }
            if (!m_ctx.producer->produce(m_ctx.opt.receiptTopic, row[1].as<std::string>(),
                                         row[2].as<std::string>(), err))
                throw std::runtime_error("producing a receipt: " + err);
            m_ctx.receiptsPublished++;
            if (u(m_rng) < 0.03) // at least once: a retry after a lost acknowledgement
                again.push_back(i);
        }
        for (const int i : again) {
            if (!m_ctx.producer->produce(m_ctx.opt.receiptTopic, rows[i][1].as<std::string>(),
                                         rows[i][2].as<std::string>(), err))
                throw std::runtime_error("producing a receipt: " + err);
            m_ctx.receiptsDuplicated++;
        }
        if (!m_ctx.producer->flush(30'000))
            throw std::runtime_error("receipts were not acknowledged by Kafka within 30 s");
        ids += "}";
        w.exec("UPDATE callscope_sim_outbox SET published = true WHERE id = ANY(" + w.quote(ids) +
               "::bigint[])");
        w.commit();
        return static_cast<int>(rows.size());
    }

    SimContext& m_ctx;
    std::mt19937_64 m_rng;
};

// ---- receipts back to the callers -------------------------------------------

class ReceiptListener {
public:
    ReceiptListener(SimContext& ctx, std::unique_ptr<KafkaPartitionReader> reader)
        : m_ctx(ctx), m_reader(std::move(reader)) {}

    void run(const std::atomic<bool>& stop) {
        simdjson::ondemand::parser parser;
        while (!stop) {
            for (const KafkaMessage& m : m_reader->poll(100)) {
                ReceiptNote note;
                if (!decode(parser, m.value, note))
                    continue;
                m_ctx.receiptsSeen++;
                int owner = -1;
                {
                    std::lock_guard lock(m_ctx.mutex);
                    auto it = m_ctx.callOwner.find(note.callId);
                    if (it != m_ctx.callOwner.end())
                        owner = it->second;
                }
                if (owner >= 0)
                    m_ctx.deliver(owner, std::move(note));
            }
        }
    }

private:
    static bool decode(simdjson::ondemand::parser& parser, const std::string& value,
                       ReceiptNote& out) {
        simdjson::padded_string json(value);
        simdjson::ondemand::document doc;
        if (parser.iterate(json).get(doc))
            return false;
        std::string_view callId, status;
        std::int64_t version = 0;
        if (doc["callId"].get_string().get(callId) || doc["status"].get_string().get(status) ||
            doc["version"].get_int64().get(version))
            return false;
        const auto s = recordStatusFromName(status);
        if (!s)
            return false;
        out.callId = std::string(callId);
        out.status = *s;
        out.version = static_cast<int>(version);
        return true;
    }

    SimContext& m_ctx;
    std::unique_ptr<KafkaPartitionReader> m_reader;
};

// What marks a table or a topic as the simulator's own: the comment on its
// tables, and a row per topic it created in callscope_sim_topics.
constexpr const char* kSimMarker = "callscope sim: synthetic data, safe to delete";
constexpr const char* kSimTables[] = {"idempotent_record", "idempotent_attempt",
                                      "callscope_sim_outbox", "callscope_sim_topics"};

// The simulator never writes into a database it was not pointed at by name,
// nor into tables it did not create: a production config passed by mistake
// is refused before the first write.
bool prepareDatabase(const std::string& dsn, const std::string& allowWritesTo,
                     std::string& error, bool& refused) {
    const std::vector<std::string> secrets = dsnSecrets(dsn);
    try {
        pqxx::connection c(dsn);
        const std::string db = c.dbname();
        if (allowWritesTo.empty()) {
            error = "sim writes synthetic records into the database \"" + db +
                    "\" and deletes expired ones: say that it may with --allow-writes " + db;
            refused = true;
            return false;
        }
        if (allowWritesTo != db) {
            error = "--allow-writes names \"" + allowWritesTo +
                    "\" but the config's DSN connects to \"" + db + "\": nothing was written";
            refused = true;
            return false;
        }
        pqxx::work w(c);
        for (const char* table : kSimTables) {
            const pqxx::row r = w.exec_params1(
                "SELECT to_regclass($1) IS NOT NULL, "
                "coalesce(obj_description(to_regclass($1), 'pg_class'), '')",
                std::string(table));
            if (r[0].as<bool>() && r[1].as<std::string>() != kSimMarker) {
                error = "table " + std::string(table) + " in database \"" + db +
                        "\" was not made by callscope sim (it carries no sim marker): sim writes "
                        "only into tables it created; point it at a database of its own";
                refused = true;
                return false;
            }
        }
        w.exec(std::string(kReferenceSchemaSql));
        w.exec(std::string(kSimOutboxSql));
        w.exec("CREATE TABLE IF NOT EXISTS callscope_sim_topics (topic text PRIMARY KEY, "
               "created_at timestamptz NOT NULL DEFAULT now())");
        for (const char* table : kSimTables)
            w.exec("COMMENT ON TABLE " + w.quote_name(table) + " IS " + w.quote(kSimMarker));
        w.commit();
        return true;
    } catch (const std::exception& e) {
        error = "PostgreSQL (" + redactDsn(dsn) + "): " + scrubSecrets(e.what(), secrets);
        return false;
    }
}

// Topics the simulator may write: the ones it has just created (recorded as
// its own) and the ones it created before; any other existing topic is refused.
bool claimTopics(const std::string& dsn, const std::vector<std::string>& created,
                 const std::vector<std::string>& existed, std::string& error, bool& refused) {
    try {
        pqxx::connection c(dsn);
        pqxx::work w(c);
        for (const std::string& t : created)
            w.exec_params("INSERT INTO callscope_sim_topics (topic) VALUES ($1) "
                          "ON CONFLICT DO NOTHING",
                          t);
        bool ok = true;
        for (const std::string& t : existed)
            if (ok &&
                w.exec_params("SELECT 1 FROM callscope_sim_topics WHERE topic = $1", t).empty()) {
                error = "topic " + t + " exists and was not created by callscope sim: sim writes "
                        "only into topics it created; name another with --receipt-topic / "
                        "--caller-topic";
                ok = false;
                refused = true;
            }
        w.commit();
        return ok;
    } catch (const std::exception& e) {
        error = "PostgreSQL (" + redactDsn(dsn) + "): " + scrubSecrets(e.what(), dsnSecrets(dsn));
        return false;
    }
}

} // namespace

SimResult runSimulation(const Config& config, const SimOptions& opt,
                        const std::atomic<bool>* stop) {
    SimResult result;
    SimContext ctx(config, opt);
    ctx.callerTopic = opt.callerTopic.empty() ? config.kafka.callerTopics : opt.callerTopic;
    if (!ctx.callerTopic.empty() && ctx.callerTopic.front() == '^') {
        result.error = "the caller topic is a pattern (" + ctx.callerTopic +
                       "); name one topic with --caller-topic";
        return result;
    }
    if (opt.callers < 1 || opt.servers < 1 || opt.workersPerServer < 1) {
        result.error = "--callers, --servers and --workers must be at least 1";
        return result;
    }
    {
        std::mt19937_64 r(opt.seed ^ static_cast<std::uint64_t>(nowMillis()));
        ctx.runId = randomHex(r, 6);
    }
    if (!prepareDatabase(config.postgres.dsn, opt.allowWritesTo, result.error, result.refused))
        return result;

    KafkaSettings ks{config.kafka.brokers, config.kafka.properties, config.kafka.partitioner};
    std::vector<std::string> topics{opt.receiptTopic};
    if (!ctx.callerTopic.empty())
        topics.push_back(ctx.callerTopic);
    if (opt.createTopics) {
        std::vector<std::string> existed;
        if (!ensureTopics(ks, topics, opt.partitions, result.error, &existed)) {
            result.error = "Kafka (" + config.kafka.brokers + "): " + result.error;
            return result;
        }
        std::vector<std::string> created;
        for (const std::string& t : topics)
            if (std::find(existed.begin(), existed.end(), t) == existed.end())
                created.push_back(t);
        if (!claimTopics(config.postgres.dsn, created, existed, result.error, result.refused))
            return result;
    }
    auto producer = KafkaProducer::create(ks, result.error);
    if (!producer)
        return result;
    ctx.producer = producer.get();
    auto reader = KafkaPartitionReader::create(ks, result.error);
    if (!reader || !reader->assignWholeTopic(opt.receiptTopic, true, result.error))
        return result;
    if (opt.ready)
        opt.ready();

    for (int i = 0; i < opt.servers; ++i)
        ctx.servers.push_back(
            std::make_unique<SimServer>(ctx, "pay-svc-" + std::to_string(i + 1), opt.workersPerServer));
    for (int i = 0; i < opt.callers; ++i)
        ctx.callers.push_back(std::make_unique<SimCaller>(ctx, i));

    std::atomic<bool> relayStop{false}, listenerStop{false};
    for (auto& s : ctx.servers)
        s->start();
    OutboxRelay relay(ctx);
    ReceiptListener listener(ctx, std::move(reader));
    std::thread relayThread([&] { relay.run(relayStop); });
    std::thread listenerThread([&] { listener.run(listenerStop); });

    const SteadyTime end = SteadyClock::now() + opt.duration;
    const SteadyTime drainEnd = end + opt.drainTimeout;
    std::vector<std::int64_t> unfinished(ctx.callers.size(), 0);
    std::vector<std::thread> callerThreads;
    for (std::size_t i = 0; i < ctx.callers.size(); ++i)
        callerThreads.emplace_back(
            [&, i] { unfinished[i] = ctx.callers[i]->run(end, drainEnd, stop); });
    for (auto& t : callerThreads)
        t.join();
    for (auto& s : ctx.servers)
        s->stop(); // answers what is queued; its outbox rows are written
    relayStop = true;
    relayThread.join();
    if (!producer->flush(30'000))
        ctx.fail("Kafka did not acknowledge every message within 30 s");
    // Let callers see the last receipts before the listener stops (counts only).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    listenerStop = true;
    listenerThread.join();

    std::lock_guard lock(ctx.mutex);
    result.stats = ctx.stats;
    result.stats.attempts = ctx.attempts;
    result.stats.callerEvents = ctx.callerEvents;
    result.stats.receiptsPublished = ctx.receiptsPublished;
    result.stats.receiptsDuplicated = ctx.receiptsDuplicated;
    result.stats.receiptsDropped = ctx.receiptsDropped;
    result.stats.receiptsSeenByCallers = ctx.receiptsSeen;
    for (auto n : unfinished)
        result.stats.unfinishedCalls += n;
    if (producer->deliveryFailures() > 0)
        ctx.failure = std::to_string(producer->deliveryFailures()) +
                      " messages were not delivered to Kafka";

    if (!opt.truthPath.empty()) {
        std::vector<std::string> lines;
        for (const auto& a : ctx.truth)
            lines.push_back(toJsonLine(a));
        std::sort(lines.begin(), lines.end());
        std::ofstream out(opt.truthPath, std::ios::trunc);
        for (const auto& l : lines)
            out << l << '\n';
        if (!out) {
            result.error = "cannot write the truth file " + opt.truthPath;
            return result;
        }
    }
    result.error = ctx.failure;
    result.ok = ctx.failure.empty();
    return result;
}

std::string toJsonLine(const SimStats& s) {
    std::string injected = "{";
    for (const auto& [k, n] : s.injected)
        injected += (injected.size() > 1 ? "," : "") + jsonQuote(toString(k)) + ":" +
                    std::to_string(n);
    injected += "}";
    return R"({"type":"sim_summary","calls":)" + std::to_string(s.calls) +
           R"(,"attempts":)" + std::to_string(s.attempts) + R"(,"callerEvents":)" +
           std::to_string(s.callerEvents) + R"(,"receiptsPublished":)" +
           std::to_string(s.receiptsPublished) + R"(,"receiptsDuplicated":)" +
           std::to_string(s.receiptsDuplicated) + R"(,"receiptsDropped":)" +
           std::to_string(s.receiptsDropped) + R"(,"receiptsSeenByCallers":)" +
           std::to_string(s.receiptsSeenByCallers) + R"(,"timeouts":)" +
           std::to_string(s.timeouts) + R"(,"unfinishedCalls":)" +
           std::to_string(s.unfinishedCalls) + R"(,"injected":)" + injected + "}";
}

} // namespace callscope
