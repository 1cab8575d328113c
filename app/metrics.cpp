#include "app/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <stdexcept>

namespace callscope {

namespace {

// Our own totals are monotonic: the counter moves by what they grew.
struct Mirrored {
    prometheus::Counter* counter = nullptr;
    double last = 0;
    void set(double now) {
        if (now > last)
            counter->Increment(now - last);
        last = std::max(last, now);
    }
};

} // namespace

struct MetricsServer::Impl {
    prometheus::Exposer exposer;
    std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
    prometheus::Family<prometheus::Gauge>& anomaliesOpen =
        prometheus::BuildGauge()
            .Name("callscope_anomalies_open")
            .Help("Open anomalies by kind and severity")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& anomaliesOpened =
        prometheus::BuildCounter()
            .Name("callscope_anomalies_opened_total")
            .Help("Anomalies opened since watch started, by kind")
            .Register(*registry);
    prometheus::Family<prometheus::Histogram>& detectionDelay =
        prometheus::BuildHistogram()
            .Name("callscope_detection_delay_seconds")
            .Help("From an anomaly's first event to its detection")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& eventsRead =
        prometheus::BuildCounter()
            .Name("callscope_events_read_total")
            .Help("Events kept, by source: records (record changes), attempts, receipts, "
                  "caller_events")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& sourceUp =
        prometheus::BuildGauge()
            .Name("callscope_source_up")
            .Help("1 while the source is read (connected and not down), else 0")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& sourceLag =
        prometheus::BuildGauge()
            .Name("callscope_source_lag_seconds")
            .Help("How far behind now the source has been read completely")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& sourceLagMessages =
        prometheus::BuildGauge()
            .Name("callscope_source_lag_messages")
            .Help("Messages written to the source not yet read (Kafka)")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& store =
        prometheus::BuildGauge()
            .Name("callscope_store_calls")
            .Help("CallIds tracked: held in full, or packed once final (live)")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& storeBytes =
        prometheus::BuildGauge()
            .Name("callscope_store_bytes")
            .Help("Memory the calls and anomalies held take")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& evicted =
        prometheus::BuildCounter()
            .Name("callscope_evicted_calls_total")
            .Help("Calls that left memory by retention or the memory budget")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& evictedOverBudget =
        prometheus::BuildCounter()
            .Name("callscope_evicted_over_budget_calls_total")
            .Help("Calls pushed out early by max_calls or the memory budget")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& rejected =
        prometheus::BuildCounter()
            .Name("callscope_rejected_messages_total")
            .Help("Messages and rows counted and skipped, by reason")
            .Register(*registry);
    prometheus::Family<prometheus::Counter>& exec =
        prometheus::BuildCounter()
            .Name("callscope_exec_commands_total")
            .Help("watch --exec commands by result: ok, failed, dropped")
            .Register(*registry);
    prometheus::Family<prometheus::Gauge>& buildInfo = prometheus::BuildGauge()
                                                           .Name("callscope_build_info")
                                                           .Help("Always 1; the version as a label")
                                                           .Register(*registry);

    std::map<std::string, Mirrored> mirrored; // by a name of ours
    std::map<std::string, prometheus::Gauge*> open;

    explicit Impl(const std::string& hostPort) : exposer(hostPort) {}

    Mirrored& counter(const std::string& id, prometheus::Family<prometheus::Counter>& family,
                      const prometheus::Labels& labels) {
        Mirrored& m = mirrored[id];
        if (!m.counter)
            m.counter = &family.Add(labels);
        return m;
    }
};

MetricsServer::MetricsServer(const std::string& hostPort) {
    // ":9464" is every address, as Prometheus writes it; civetweb wants a host.
    const std::string address = hostPort.rfind(':', 0) == 0 ? "0.0.0.0" + hostPort : hostPort;
    try {
        m = std::make_unique<Impl>(address);
    } catch (const std::exception& e) {
        // civetweb says "null context ... binding to port": in our words.
        throw std::runtime_error("cannot serve metrics on " + address +
                                 ": the port is in use or the address is not this machine's (" +
                                 e.what() + ")");
    }
    m->exposer.RegisterCollectable(m->registry);
    m->buildInfo.Add({{"version", CALLSCOPE_VERSION}}).Set(1);
    // Every kind and severity from the start: a series that exists at 0 is
    // what an alert rule compares with.
    for (const std::string_view kind : kAnomalyKindNames)
        for (const std::string_view sev : kSeverityNames)
            m->open[std::string(kind) + "/" + std::string(sev)] = &m->anomaliesOpen.Add(
                {{"kind", std::string(kind)}, {"severity", std::string(sev)}});
    for (const std::string_view kind : kAnomalyKindNames)
        m->counter("opened/" + std::string(kind), m->anomaliesOpened,
                   {{"kind", std::string(kind)}});
}

MetricsServer::~MetricsServer() = default;

std::vector<int> MetricsServer::ports() const {
    return m->exposer.GetListeningPorts();
}

void MetricsServer::anomalyChanged(const AnomalyChange& c, EpochMillis now) {
    if (c.what != ChangeKind::Opened)
        return;
    const std::string kind(toString(c.anomaly.kind));
    m->counter("opened/" + kind, m->anomaliesOpened, {{"kind", kind}}).counter->Increment();
    if (c.anomaly.firstEventAt != kNoTime && now >= c.anomaly.firstEventAt) {
        static const prometheus::Histogram::BucketBoundaries buckets{0.1, 0.5, 1,   2,   5,   10,
                                                                     30,  60,  120, 300, 900, 3600};
        m->detectionDelay.Add({{"kind", kind}}, buckets)
            .Observe(double(now - c.anomaly.firstEventAt) / 1000.0);
    }
}

void MetricsServer::update(Monitor& monitor, EpochMillis now, const ExecStats* exec) {
    std::map<std::string, int> open;
    for (const Anomaly& a : monitor.engine().anomalies())
        if (a.open)
            open[std::string(toString(a.kind)) + "/" + std::string(toString(a.severity))]++;
    for (auto& [key, gauge] : m->open)
        gauge->Set(open.count(key) ? open.at(key) : 0);

    const StoreCounters& c = monitor.store().counters();
    const std::pair<const char*, std::int64_t> events[] = {{"records", c.records},
                                                           {"attempts", c.attempts},
                                                           {"receipts", c.receipts},
                                                           {"caller_events", c.callerEvents}};
    for (const auto& [source, n] : events)
        m->counter(std::string("events/") + source, m->eventsRead, {{"source", source}})
            .set(double(n));

    for (const SourceHealth& h : monitor.sourceStates(now)) {
        if (!h.configured || (h.source != "postgres" && h.source != "kafka"))
            continue;
        const prometheus::Labels labels{{"source", h.source}};
        m->sourceUp.Add(labels).Set(h.connected && h.state != SourceState::Down ? 1 : 0);
        if (h.readTo != kNoTime)
            m->sourceLag.Add(labels).Set(double(std::max<EpochMillis>(0, now - h.readTo)) / 1000.0);
        if (h.source == "kafka")
            m->sourceLagMessages.Add(labels).Set(double(h.lag));
    }

    m->store.Add({}).Set(double(monitor.store().size() + monitor.store().frozenCount()));
    m->storeBytes.Add({}).Set(
        double(monitor.store().memoryBytes() + monitor.engine().memoryBytes()));
    const EvictionStats& ev = monitor.evictions();
    m->counter("evicted", m->evicted, {}).set(double(ev.total));
    m->counter("evictedOverBudget", m->evictedOverBudget, {}).set(double(ev.overBudget));
    for (const auto& [reason, n] : monitor.rejects().byReason)
        m->counter("rejected/" + reason, m->rejected, {{"reason", reason}}).set(double(n));
    if (exec) {
        m->counter("exec/ok", m->exec, {{"result", "ok"}}).set(double(exec->run - exec->failed));
        m->counter("exec/failed", m->exec, {{"result", "failed"}}).set(double(exec->failed));
        m->counter("exec/dropped", m->exec, {{"result", "dropped"}}).set(double(exec->dropped));
    }
}

} // namespace callscope
