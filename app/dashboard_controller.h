#pragma once
// Wires a MainWindow to a DashboardBackend on its own thread; restarting the
// backend is how the time window changes.
#include "app/dashboard_backend.h"
#include "views/main_window.h"

#include <QPointer>

#include <QThread>
#include <memory>

namespace callscope {

// Owns the model thread; restarting it is how the time window changes.
class DashboardController : public QObject {
public:
    DashboardController(const Config& config, MonitorOptions options, MainWindow* window)
        : m_config(config), m_options(options), m_window(window) {
        QObject::connect(window, &MainWindow::windowRequested, this,
                         [this](qint64 ms, const QString& label) {
                             start(ms > 0 ? nowMillis() - ms : nowMillis());
                             m_window->setWindowChoice(label);
                         });
    }

    // Another config (File > Open config): the same window over other sources.
    void setConfig(const Config& config) {
        m_config = config;
        start(nowMillis() - m_windowMs);
    }
    ~DashboardController() override { stop(); }

    void start(EpochMillis since) {
        // Live starts now: a window of the milliseconds start() takes is none.
        const qint64 ms = nowMillis() - since;
        stop();
        m_windowMs = ms < 1000 ? 0 : ms;
        m_window->restart(m_windowMs);
        // Snapshots the stopped backend posted before it stopped may still be
        // queued: only the current generation's reach the window.
        const std::uint64_t generation = ++*m_generation;
        m_thread = new QThread;
        m_backend = new DashboardBackend(m_config, m_options, since);
        m_backend->moveToThread(m_thread);
        QObject::connect(m_thread, &QThread::started, m_backend, &DashboardBackend::start);
        QObject::connect(m_backend, &DashboardBackend::snapshotReady, m_window,
                         [w = m_window, current = m_generation, generation](SnapshotPtr s) {
                             if (*current == generation)
                                 w->takeSnapshot(std::move(s));
                         });
        QObject::connect(m_backend, &DashboardBackend::callReady, m_window,
                         [w = m_window, current = m_generation, generation](CallDetailPtr d) {
                             if (*current == generation)
                                 w->takeCall(std::move(d));
                         });
        QObject::connect(m_backend, &DashboardBackend::adviceReady, m_window,
                         [w = m_window, current = m_generation, generation](AdvicePtr a) {
                             if (*current == generation)
                                 w->takeAdvice(std::move(a));
                         });
        QObject::connect(m_window, &MainWindow::adviceRequested, m_backend,
                         &DashboardBackend::requestAdvice);
        QObject::connect(m_backend, &DashboardBackend::status, m_window, &MainWindow::setStatus);
        QObject::connect(m_backend, &DashboardBackend::fatal, m_window, &MainWindow::showFatal);
        QObject::connect(m_window, &MainWindow::callRequested, m_backend,
                         [b = m_backend](const QString& query, quint64 generation) {
                             b->requestCall(query, generation);
                         });
        QObject::connect(
            m_window, &MainWindow::compareRequested, m_backend,
            [b = m_backend](const QString& callId, const QStringList& others, quint64 generation) {
                b->requestCall(callId, others, generation);
            });
        QObject::connect(m_window, &MainWindow::reportRequested, m_backend,
                         &DashboardBackend::exportReport);
        QObject::connect(m_backend, &DashboardBackend::reportProgress, m_window,
                         &MainWindow::reportProgress);
        QObject::connect(m_backend, &DashboardBackend::reportFinished, m_window,
                         &MainWindow::reportFinished);
        QPointer<DashboardBackend> guard(m_backend);
        m_cancel = QObject::connect(m_window, &MainWindow::cancelCallRequested, m_window, [guard] {
            if (guard) // cancelling touches only an atomic: no need to wait for the thread
                guard->cancelCall();
        });
        m_cancelReport =
            QObject::connect(m_window, &MainWindow::cancelReportRequested, m_window, [guard] {
                if (guard)
                    guard->cancelReport();
            });
        m_thread->start();
    }

    void stop() {
        if (!m_thread)
            return;
        QObject::disconnect(m_cancel);
        QObject::disconnect(m_cancelReport);
        m_backend->cancelReport();
        m_backend->requestStop();
        m_backend->cancelCall();
        QMetaObject::invokeMethod(m_backend, &DashboardBackend::stop, Qt::BlockingQueuedConnection);
        m_backend->deleteLater();
        QObject::connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
        m_thread->quit();
        m_thread->wait();
        m_thread = nullptr;
        m_backend = nullptr;
    }

private:
    Config m_config;
    MonitorOptions m_options;
    MainWindow* m_window;
    qint64 m_windowMs = 0; // how far back the current window starts; 0 = live
    std::shared_ptr<std::uint64_t> m_generation = std::make_shared<std::uint64_t>(0);
    QThread* m_thread = nullptr;
    DashboardBackend* m_backend = nullptr;
    QMetaObject::Connection m_cancel, m_cancelReport;
};

} // namespace callscope
