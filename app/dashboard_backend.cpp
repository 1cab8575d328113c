#include "app/dashboard_backend.h"

#include "app/report_command.h"
#include "views/report_renderer.h"

#include <QTimer>

#include <algorithm>
#include <set>
#include <unordered_map>

namespace callscope {

DashboardBackend::DashboardBackend(const Config& config, MonitorOptions options, EpochMillis since)
    : m_config(config), m_options(options), m_since(since),
      m_windowMs(std::max<EpochMillis>(0, nowMillis() - since)) {
    qRegisterMetaType<SnapshotPtr>();
    qRegisterMetaType<CallDetailPtr>();
    qRegisterMetaType<AdvicePtr>();
    // A source the deployment does not read is not an outage: its indicator
    // is grey and says so, with the detections that cannot fire.
    std::string off;
    for (const auto& [kind, reason] : detectionsOff(sourcesOf(config)))
        off += "\n" + std::string(toString(kind)) + " is off: " + reason;
    if (!config.readsKafka())
        m_sources["kafka"] = {
            "kafka", false,
            "",      kNoTime,
            0,       "not read: no receipt or caller event topics are configured" + off,
            false,   SourceState::NotRead};
    if (!config.readsPostgres())
        m_sources["postgres"] = {
            "postgres", false,
            "",         kNoTime,
            0,          "not read: PostgreSQL is disabled ([postgres] enabled = false)" + off,
            false,      SourceState::NotRead};
}

DashboardBackend::~DashboardBackend() {
    if (m_monitor)
        m_monitor->stop();
}

void DashboardBackend::start() {
    m_monitor = std::make_unique<Monitor>(m_config, m_options);
    // (Packed until retention or key_rotation_window, the longer, has passed them.)
    m_packed = PackedCallTally(Millis{std::max(m_config.retention.finishedCalls.count(),
                                               m_config.detect.keyRotationWindow.count())});
    m_monitor->observeFrozen([this](const CallState& c, std::span<const CallEvent> e, int sign) {
        m_packed.add(c, e, sign);
    });
    m_timer = new QTimer(this);
    m_timer->setInterval(50); // pumps at 20 Hz; the GUI repaints at its own pace
    connect(m_timer, &QTimer::timeout, this, &DashboardBackend::tick);
    m_timer->start();
    tick();
}

void DashboardBackend::stop() {
    if (m_timer)
        m_timer->stop();
    if (m_monitor)
        m_monitor->stop();
}

void DashboardBackend::tick() {
    const EpochMillis now = nowMillis();
    if (m_phase == Phase::Failed || m_stopping)
        return;
    if (m_phase == Phase::Connecting) {
        // Each source loads the window and follows on its own; an outage of
        // one is shown on its indicator and retried while the other goes on.
        const bool pg = m_config.readsPostgres(), kafka = m_config.readsKafka();
        const QString from = pg && kafka ? QStringLiteral("PostgreSQL and Kafka")
                             : pg        ? QStringLiteral("PostgreSQL")
                                         : QStringLiteral("Kafka");
        emit status(QStringLiteral("Loading the window from %1\u2026").arg(from));
        m_monitor->startLive(m_since);
        m_phase = Phase::Following;
    }
    try {
        const bool wasJudged = m_monitor->windowJudged();
        auto changes = m_monitor->pump(now);
        m_pending.insert(m_pending.end(), std::make_move_iterator(changes.begin()),
                         std::make_move_iterator(changes.end()));
        if (!wasJudged && m_monitor->windowJudged())
            emit status(QStringLiteral("Following live"));
        // Retention and the memory budget, as in watch: once a minute, after
        // what is queued has been applied (calls whose data the sources have
        // read are packed).
        if (m_lastRetention == 0) {
            m_lastRetention = now;
        } else if (m_monitor->windowJudged() &&
                   now - m_lastRetention >= m_options.retentionEveryMs) {
            m_lastRetention = now;
            // Resolved anomalies stay listed for as long as the window is long.
            m_monitor->applyRetention(now, Millis{m_windowMs});
        }
    } catch (const SourceError& e) {
        m_phase = Phase::Failed;
        emit fatal(QString::fromStdString(e.what()));
        return;
    }
    m_monitor->healthChanges(); // the states below carry the latest of each
    for (SourceHealth& h : m_monitor->sourceStates(now))
        if (h.configured)
            m_sources[h.source] = std::move(h);
    if (now - m_lastSnapshot < 100)
        return;
    m_lastSnapshot = now;
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = now;
    snap->changes.swap(m_pending);
    snap->windowJudged = m_monitor->windowJudged();
    for (const auto& [name, s] : m_sources)
        snap->sources.push_back(s);
    if (now - m_lastStats >= 1000) {
        computeStats(*snap, now);
        m_lastStats = now;
    }
    emit snapshotReady(std::move(snap));
}

void DashboardBackend::computeStats(DashboardSnapshot& s, EpochMillis now) {
    const CallStore& store = m_monitor->store();
    s.statsIncluded = true;
    s.calls = store.size() + store.frozenCount();
    s.packedCalls = store.frozenCount();
    const StoreCounters& c = store.counters();
    const double seconds = m_lastStats ? double(now - m_lastStats) / 1000.0 : 0;
    if (seconds > 0) {
        s.receiptsPerSec = double(c.receipts - m_lastCounters.receipts) / seconds;
        s.attemptsPerSec = double(c.attempts - m_lastCounters.attempts) / seconds;
        s.callerEventsPerSec = double(c.callerEvents - m_lastCounters.callerEvents) / seconds;
        s.recordsPerSec = double(c.records - m_lastCounters.records) / seconds;
    }
    m_lastCounters = c;
    countCalls(store, m_monitor->engine().anomalies(), now, s, &m_packed);
    const RejectStats& r = m_monitor->rejects();
    s.rejected = r.total();
    s.rejectedByReason = r.byReason;
    s.lostByPartition = m_monitor->gaps().lostByPartition;
    s.evictedCalls = m_monitor->evictions().total;
    s.evictedOverBudget = m_monitor->evictions().overBudget;
    s.forgottenAnomalies = m_monitor->evictions().anomalies;
    s.storeBytes = store.memoryBytes() + m_monitor->evictions().anomalyBytes;
    s.storeBudget = static_cast<std::size_t>(m_config.retention.maxBytes);
    for (const Rejection& x : r.samples)
        s.rejectedSamples.push_back(x.where + ": " + x.reason + ": " + x.sample);
}

void DashboardBackend::requestAdvice(double safety) {
    if (!m_monitor)
        return;
    const CallStore& store = m_monitor->store();
    AdviceCollector collector;
    EpochMillis from = nowMillis();
    for (std::uint32_t i = 0; i < store.size(); ++i) {
        collector.addCall(store, i);
        from = std::min(from, store.call(i).base());
    }
    // Live, the calls final and healthy wait packed: measured as they are.
    store.forEachFrozen(
        [&](std::string_view callId, const CallState& c, std::span<const CallEvent> events) {
            collector.addCall(store, callId, c, events);
            from = std::min(from, c.base());
        });
    emit adviceReady(std::make_shared<const Advice>(
        collector.finish(m_monitor->engine().anomalies(), safety, from, nowMillis())));
}

void DashboardBackend::requestCall(const QString& query, const QStringList& others,
                                   quint64 generation) {
    m_cancelCall = false;
    auto detail = std::make_shared<CallDetail>();
    detail->query = query.trimmed().toStdString();
    QStringList parts;
    for (const QString& o : others)
        if (!o.trimmed().isEmpty())
            parts << o.trimmed();
    detail->generation = generation;
    if (!m_monitor || detail->query.empty()) {
        detail->message = "nothing to look up";
        emit callReady(std::move(detail));
        return;
    }
    const CallStore& store = m_monitor->store();
    // (A call frozen, final and healthy, comes back whole first: by callId or bizNo.)
    std::uint32_t i = m_monitor->thawNamed(detail->query);
    if (i == CallStore::npos) {
        // A bizNo names the calls made for one business action.
        const auto byBizNo = store.findByBizNo(detail->query);
        for (const std::uint32_t m : byBizNo)
            detail->otherMatches.push_back(store.callId(m));
        if (!byBizNo.empty())
            i = byBizNo.front();
    }
    if (i == CallStore::npos && m_phase == Phase::Following) {
        try {
            ColdFetchStats stats;
            i = m_monitor->ensureCall(detail->query, m_cancelCall, &stats);
            detail->message = "read cold: by key from PostgreSQL and " +
                              std::to_string(stats.messagesScanned) + " messages of " +
                              std::to_string(stats.topics) + " partitions";
        } catch (const SourceError& e) {
            detail->message = e.what();
        }
    }
    if (m_cancelCall) {
        detail->message = "cancelled";
        emit callReady(std::move(detail));
        return;
    }
    if (i == CallStore::npos) {
        if (detail->message.empty() || detail->message.rfind("read cold", 0) == 0)
            detail->message = "no callId or bizNo \"" + detail->query + "\" is known";
        // Not known is not the same as not there while a source is unavailable.
        for (const auto& [name, h] : m_sources) {
            if (!h.configured || h.state == SourceState::Live || h.state == SourceState::Quiet ||
                h.state == SourceState::Lagging)
                continue;
            const char* shown = name == "postgres" ? "PostgreSQL" : "Kafka";
            detail->message +=
                std::string("; ") + shown + " is " + toString(h.state) +
                (h.state == SourceState::Down && !h.lastError.empty() ? " (" + h.lastError + ")"
                                                                      : std::string()) +
                ", so the call may exist there";
        }
        emit callReady(std::move(detail));
        return;
    }
    detail->found = true;
    if (!parts.isEmpty()) {
        std::vector<std::uint32_t> calls{i};
        std::string missing;
        for (const QString& p : parts) {
            if (m_cancelCall)
                break;
            const std::string id = p.toStdString();
            std::uint32_t j = store.find(id);
            std::string why;
            if (j == CallStore::npos && m_phase == Phase::Following) {
                try {
                    j = m_monitor->ensureCall(id, m_cancelCall, nullptr);
                } catch (const SourceError& e) {
                    why = std::string(" (") + e.what() + ")";
                }
            }
            if (j != CallStore::npos)
                calls.push_back(j);
            else
                missing += (missing.empty() ? "" : ", ") + id + why;
        }
        detail->group = compareCalls(store, calls, nowMillis());
        if (!missing.empty())
            detail->message = "not found to compare: " + missing;
    } else {
        detail->group = groupOf(store, m_monitor->engine(), i, nowMillis());
    }
    detail->timeline = buildTimeline(store, i, nowMillis());
    detail->diagnosis = diagnose(store, m_monitor->engine(), i);
    for (const Anomaly* a : m_monitor->engine().anomaliesOf(detail->timeline.callId))
        detail->anomalies.push_back(*a);
    emit callReady(std::move(detail));
}

} // namespace callscope

namespace callscope {

void DashboardBackend::exportReport(const QStringList& callIds, const QString& path,
                                    bool includePayloads) {
    m_cancelReport = false;
    if (!m_monitor || m_phase != Phase::Following) {
        emit reportFinished(path, QStringLiteral("the sources are not loaded yet"));
        return;
    }
    ReportRequest req;
    for (const QString& id : callIds)
        req.callIds.push_back(id.toStdString());
    req.since = m_since;
    req.until = nowMillis();
    req.includePayloads = includePayloads;
    QString error;
    try {
        Report report = buildReport(*m_monitor, req, m_cancelReport);
        report.surface = "gui"; // the redaction note names the export dialog's choice
        const auto progress = [this](int done, int total) {
            emit reportProgress(done, total);
            return !m_cancelReport.load();
        };
        writeReport(report, path, error, progress);
    } catch (const SourceError& e) {
        error = QString::fromStdString(e.what());
    }
    if (m_cancelReport)
        error = QStringLiteral("cancelled");
    emit reportFinished(path, error);
}

} // namespace callscope
