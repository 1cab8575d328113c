// The simulated server: its worker threads, the idempotency record's
// prepared statements, and one request handled from placeholder to receipt.
#include "sim/server.h"

#include "models/json_writer.h"
#include "models/timestamp.h"

#include <chrono>
#include <exception>
#include <functional>
#include <memory>

namespace callscope::sim {

SimServer::SimServer(SimContext& ctx, std::string name, int workers)
    : m_ctx(ctx), m_name(std::move(name)), m_workers(workers) {}

void SimServer::start() {
    for (int i = 0; i < m_workers; ++i)
        m_threads.emplace_back([this] { workerLoop(); });
}

void SimServer::submit(Request r) {
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(r));
    }
    m_cv.notify_one();
}

void SimServer::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_cv.notify_all();
    for (auto& t : m_threads)
        t.join();
    m_threads.clear();
}

void SimServer::workerLoop() {
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

void SimServer::prepare(pqxx::connection& c) {
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
    c.prepare("lock_record", "SELECT request_digest, status, lock_version, "
                             "(extract(epoch from updated_at) * 1000)::bigint "
                             "FROM idempotent_record WHERE call_id = $1 FOR UPDATE");
    c.prepare("reoccupy", "UPDATE idempotent_record SET lock_version = lock_version + 1, "
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
    // The business write, in the same transaction as the result (the protocol
    // done right), unless effect_missing skips it.
    c.prepare("business_row", "INSERT INTO callscope_sim_orders (order_no, call_id) "
                              "VALUES ($1, $2) ON CONFLICT (order_no) DO NOTHING");
    c.prepare("outbox", "INSERT INTO callscope_sim_outbox (call_id, payload, fault) "
                        "VALUES ($1, $2, NULLIF($3, ''))");
}

std::string SimServer::receiptJson(const Request& r, RecordStatus status, int version,
                                   EpochMillis finishedAt) const {
    JsonWriter j;
    j.object().field("callId", r.callId).field("status", toString(status));
    if (status != RecordStatus::Processing)
        j.field("resultRef",
                "result-store/" + formatIsoMillis(finishedAt).substr(0, 10) + "/" + r.callId)
            .field("finishedAt", formatIsoMillis(finishedAt));
    j.field("version", version)
        .field("sourceInstance", m_name)
        .field("requestDigest", r.digest)
        .end();
    return j.take();
}

void SimServer::recordAttempt(pqxx::work& w, const Request& r, AttemptOutcome o,
                              const std::string& at, const std::string& finished,
                              std::int64_t* id) {
    const pqxx::result res = w.exec_prepared("attempt", r.callId, r.digest, r.source, r.traceId,
                                             std::string(toString(o)), at, finished);
    if (id)
        *id = res[0][0].as<std::int64_t>();
    m_ctx.attempts++;
}

AnomalyLine SimServer::truthLine(const Request& r, AnomalyKind kind, std::string summary) {
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

void SimServer::answer(const Request& r, ResponseKind kind, RecordStatus status) {
    if (r.callerIndex >= 0 && r.attempt > 0)
        m_ctx.deliver(r.callerIndex, Response{r.replyCallId.empty() ? r.callId : r.replyCallId,
                                              r.attempt, kind, status});
}

void SimServer::handle(pqxx::connection& c, Request& r) {
    if (r.orphanReceiptOnly) {
        pqxx::work w(c);
        w.exec_prepared("outbox", r.callId, receiptJson(r, RecordStatus::Success, 2, nowMillis()),
                        std::string());
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
            w.exec_prepared(r.brokenPlaceholder ? "broken_placeholder" : "placeholder", r.callId,
                            r.digest, r.source, arrivedIso, formatIsoMillis(arrived + ttl));
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
        recordAttempt(w, r, outcome, arrivedIso, executes ? std::string() : arrivedIso, &attemptId);
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
        JsonWriter json;
        json.object()
            .field("callId", r.callId)
            .field("result", result == RecordStatus::Success ? "approved" : "declined")
            .field("account", "DE89 3704 0044 0532 0130 00")
            .field("amountCents",
                   static_cast<std::int64_t>(100 + (std::hash<std::string>{}(r.callId) % 100000)))
            .end();
        const std::string snapshot = json.take();
        w.exec_prepared("finish_record", r.callId, std::string(toString(result)), snapshot,
                        finishedIso, lockVersion);
        w.exec_prepared("finish_attempt", attemptId, finishedIso);
        if (result == RecordStatus::Success && !r.skipEffect && !r.bizNo.empty())
            w.exec_prepared("business_row", r.bizNo, r.callId);
        RecordStatus published = result;
        std::string fault;
        if (r.wrongReceipt)
            published =
                result == RecordStatus::Success ? RecordStatus::Failed : RecordStatus::Success;
        if (r.dropReceipt)
            fault = "drop";
        w.exec_prepared("outbox", r.callId,
                        receiptJson(r, published, 2 * lockVersion + 2, finished), fault);
        w.commit();
    }
    answer(r, ResponseKind::Done, result);
}

} // namespace callscope::sim
