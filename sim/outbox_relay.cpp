// The simulated outbox relay: outbox rows to the receipt topic, then marked
// published; expired records deleted on the way.
#include "sim/outbox_relay.h"

#include "models/timestamp.h"
#include "sim/kafka_writer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace callscope::sim {

void OutboxRelay::run(const std::atomic<bool>& stopWhenEmpty) {
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
                if (stopWhenEmpty && m_held.empty())
                    return;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
    } catch (const std::exception& e) {
        m_ctx.fail(std::string("outbox relay: ") + e.what());
    }
}

void OutboxRelay::purgeExpired(pqxx::connection& c) {
    pqxx::work w(c);
    w.exec("DELETE FROM idempotent_record WHERE expire_at < " +
           w.quote(formatIsoMillis(nowMillis())) + "::timestamptz");
    w.commit();
}

int OutboxRelay::publishBatch(pqxx::connection& c) {
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
    // A relay that stalls on one receipt publishes the call's next one first:
    // some PROCESSING receipts wait (unpublished) until a later receipt of
    // their call has gone out, or kMaxHold has passed.
    const EpochMillis now = nowMillis();
    std::map<std::string, std::int64_t> newestOut; // per call: its newest row going out
    std::vector<int> heldBack;
    std::vector<int> publish;
    for (const int i : order) {
        const auto row = rows[i];
        const std::int64_t id = row[0].as<std::int64_t>();
        auto held = m_held.find(id);
        if (held == m_held.end() &&
            row[2].as<std::string>().find("\"PROCESSING\"") != std::string::npos && u(m_rng) < 0.1)
            held = m_held.emplace(id, now).first;
        if (held != m_held.end() && now - held->second < kMaxHold) {
            heldBack.push_back(i);
            continue;
        }
        publish.push_back(i);
    }
    for (const int i : publish)
        if (rows[i][3].as<std::string>() != "drop") { // (a dropped row never goes out)
            std::int64_t& newest = newestOut[rows[i][1].as<std::string>()];
            newest = std::max(newest, rows[i][0].as<std::int64_t>());
        }
    for (const int i : heldBack) { // released behind a newer receipt of its call
        const auto it = newestOut.find(rows[i][1].as<std::string>());
        if (it != newestOut.end() && it->second > rows[i][0].as<std::int64_t>())
            publish.push_back(i);
    }
    std::vector<int> again;
    std::string ids = "{";
    std::string err;
    for (const int i : publish) {
        const auto row = rows[i];
        m_held.erase(row[0].as<std::int64_t>());
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
    if (!publish.empty())
        w.exec("UPDATE callscope_sim_outbox SET published = true WHERE id = ANY(" + w.quote(ids) +
               "::bigint[])");
    w.commit();
    return static_cast<int>(publish.size());
}

} // namespace callscope::sim
