// `callscope sim`: sets up the database and topics, starts the simulated
// servers, callers, outbox relay and receipt listener (sim/*), runs them for
// the duration, drains, and writes the truth file and the summary.
#include "sim/simulator.h"

#include "models/anomaly_json.h"
#include "models/timestamp.h"
#include "sim/caller.h"
#include "sim/kafka_writer.h"
#include "sim/outbox_relay.h"
#include "sim/receipt_listener.h"
#include "sim/server.h"
#include "sim/sim_context.h"
#include "sim/sim_setup.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace callscope {

SimResult runSimulation(const Config& config, const SimOptions& opt,
                        const std::atomic<bool>* stop) {
    SimResult result;
    sim::SimContext ctx(config, opt);
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
        ctx.runId = sim::randomHex(r, 6);
    }
    if (!sim::prepareTargets(config, opt, ctx.callerTopic, result))
        return result;
    KafkaSettings ks{config.kafka.brokers, config.kafka.properties, config.kafka.partitioner};
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
        ctx.servers.push_back(std::make_unique<sim::SimServer>(
            ctx, "pay-svc-" + std::to_string(i + 1), opt.workersPerServer));
    for (int i = 0; i < opt.callers; ++i)
        ctx.callers.push_back(std::make_unique<sim::SimCaller>(ctx, i));

    std::atomic<bool> relayStop{false}, listenerStop{false};
    for (auto& s : ctx.servers)
        s->start();
    sim::OutboxRelay relay(ctx);
    sim::ReceiptListener listener(ctx, std::move(reader));
    std::thread relayThread([&] { relay.run(relayStop); });
    std::thread listenerThread([&] { listener.run(listenerStop); });

    const sim::SteadyTime end = sim::SteadyClock::now() + opt.duration;
    const sim::SteadyTime drainEnd = end + opt.drainTimeout;
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
        ctx.failure =
            std::to_string(producer->deliveryFailures()) + " messages were not delivered to Kafka";

    if (!writeTruthFile(opt.truthPath, ctx.truth, result.error))
        return result;
    result.error = ctx.failure;
    result.ok = ctx.failure.empty();
    return result;
}

bool writeTruthFile(const std::string& path, const std::vector<AnomalyLine>& truth,
                    std::string& error) {
    if (path.empty())
        return true;
    std::vector<std::string> lines;
    for (const auto& a : truth)
        lines.push_back(toJsonLine(a));
    std::sort(lines.begin(), lines.end());
    std::ofstream out(path, std::ios::trunc);
    for (const auto& l : lines)
        out << l << '\n';
    if (!out)
        error = "cannot write the truth file " + path;
    return static_cast<bool>(out);
}

std::string toJsonLine(const SimStats& s) {
    JsonWriter w;
    w.object()
        .field("type", "sim_summary")
        .field("calls", s.calls)
        .field("attempts", s.attempts)
        .field("callerEvents", s.callerEvents)
        .field("receiptsPublished", s.receiptsPublished)
        .field("receiptsDuplicated", s.receiptsDuplicated)
        .field("receiptsDropped", s.receiptsDropped)
        .field("receiptsSeenByCallers", s.receiptsSeenByCallers)
        .field("timeouts", s.timeouts)
        .field("unfinishedCalls", s.unfinishedCalls);
    w.key("injected").object();
    for (const auto& [kind, n] : s.injected)
        w.field(toString(kind), n);
    return w.end().end().take();
}

} // namespace callscope
