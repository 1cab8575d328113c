#pragma once
// The simulated outbox relay: publishes the receipts the servers wrote to
// callscope_sim_outbox, at least once (a few twice, some out of order), and
// purges records whose idempotency window has passed. Internal to sim/.
#include "sim/sim_context.h"

#include <pqxx/pqxx>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>

namespace callscope::sim {

class OutboxRelay {
public:
    explicit OutboxRelay(SimContext& ctx) : m_ctx(ctx), m_rng(ctx.opt.seed ^ 0x5eedULL) {}

    // Publishes until told to stop, then until the outbox is empty.
    void run(const std::atomic<bool>& stopWhenEmpty);

private:
    // Servers delete records whose idempotency window has passed.
    static void purgeExpired(pqxx::connection& c);
    int publishBatch(pqxx::connection& c);

    static constexpr EpochMillis kMaxHold = 300;

    SimContext& m_ctx;
    std::mt19937_64 m_rng;
    std::map<std::int64_t, EpochMillis> m_held; // outbox id -> when it was first held back
};

} // namespace callscope::sim
