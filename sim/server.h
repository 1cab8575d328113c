#pragma once
// The simulated server (SPEC §1): worker threads that take requests, guard
// each callId with the idempotency record (placeholder, replay, conflict,
// re-occupation), log every attempt and write its receipts to the outbox.
// Internal to sim/.
#include "sim/sim_context.h"

#include <pqxx/pqxx>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace callscope::sim {

class SimServer {
public:
    SimServer(SimContext& ctx, std::string name, int workers);

    void start();
    void submit(Request r);
    // Finishes what is queued, then stops.
    void stop();

private:
    void workerLoop();
    static void prepare(pqxx::connection& c);
    std::string receiptJson(const Request& r, RecordStatus status, int version,
                            EpochMillis finishedAt) const;
    void recordAttempt(pqxx::work& w, const Request& r, AttemptOutcome o, const std::string& at,
                       const std::string& finished, std::int64_t* id = nullptr);
    static AnomalyLine truthLine(const Request& r, AnomalyKind kind, std::string summary);
    void answer(const Request& r, ResponseKind kind, RecordStatus status);
    void handle(pqxx::connection& c, Request& r);

    SimContext& m_ctx;
    std::string m_name;
    int m_workers;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Request> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace callscope::sim
