#pragma once
// The dashboard's model thread: owns the Monitor (sources, store, detections),
// pumps it on a timer and hands immutable snapshots and call details to the
// GUI thread through queued signals. The GUI never touches the store.
#include "app/monitor.h"
#include "models/advice.h"
#include "models/dashboard_data.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

class QTimer;

namespace callscope {

using SnapshotPtr = std::shared_ptr<const DashboardSnapshot>;
using CallDetailPtr = std::shared_ptr<const CallDetail>;
using AdvicePtr = std::shared_ptr<const Advice>;

class DashboardBackend : public QObject {
    Q_OBJECT
public:
    DashboardBackend(const Config& config, MonitorOptions options, EpochMillis since);
    ~DashboardBackend() override;

    // Thread-safe: asks a running cold read to stop.
    void cancelCall() { m_cancelCall = true; }
    // Thread-safe: stops a report being written.
    void cancelReport() { m_cancelReport = true; }
    // Thread-safe: the whole backend is stopping.
    void requestStop() { m_stopping = true; }

public slots:
    void start();
    void stop();
    // A callId or a bizNo; answered by callReady with the same generation.
    // With `others`: the call beside them on one axis (Compare with…).
    void requestCall(const QString& query, const QStringList& others, quint64 generation);
    void requestCall(const QString& query, quint64 generation) {
        requestCall(query, {}, generation);
    }
    // An incident report of these callIds (all anomalies of the window when
    // empty) to `path`; the format follows its extension.
    void exportReport(const QStringList& callIds, const QString& path, bool includePayloads);
    // The Advisor: the tails of the calls held now; answered by adviceReady.
    void requestAdvice(double safety);

signals:
    void snapshotReady(callscope::SnapshotPtr snapshot);
    void callReady(callscope::CallDetailPtr detail);
    void adviceReady(callscope::AdvicePtr advice);
    void status(const QString& message);
    void fatal(const QString& message);
    void reportProgress(int done, int total);
    void reportFinished(const QString& path, const QString& error); // error "" on success

private:
    void tick();
    void computeStats(DashboardSnapshot& s, EpochMillis now);

    Config m_config;
    MonitorOptions m_options;
    EpochMillis m_since;
    std::int64_t m_windowMs; // how far back the window reached when it started
    // The calls the store holds packed (live), counted as they pack (before
    // the monitor: its store tells it until it goes).
    PackedCallTally m_packed;
    std::unique_ptr<Monitor> m_monitor;
    QTimer* m_timer = nullptr;
    enum class Phase { Connecting, Following, Failed } m_phase = Phase::Connecting;
    std::vector<AnomalyChange> m_pending;
    std::map<std::string, SourceHealth> m_sources;
    EpochMillis m_lastSnapshot = 0, m_lastStats = 0, m_lastRetention = 0;
    StoreCounters m_lastCounters;
    std::atomic<bool> m_cancelCall{false}, m_stopping{false}, m_cancelReport{false};
};

} // namespace callscope

Q_DECLARE_METATYPE(callscope::SnapshotPtr)
Q_DECLARE_METATYPE(callscope::CallDetailPtr)
Q_DECLARE_METATYPE(callscope::AdvicePtr)
