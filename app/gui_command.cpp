// callscope gui and callscope demo (SPEC §4.1, §6): the dashboard, wired to a
// model thread that owns the sources and the store.
#include "app/gui_command.h"

#include "app/command_options.h"
#include "app/dashboard_controller.h"
#include "connectors/secrets.h"
#include "models/visible_text.h"
#include "sim/demo_environment.h"
#include "sim/simulator.h"
#include "views/advisor_view.h"
#include "views/anomaly_table_model.h"
#include "views/drilldown_view.h"
#include "views/main_window.h"
#include "views/notifier.h"
#include "views/theme.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QMessageBox>
#include <QPointer>
#include <QSettings>
#include <QSize>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <cstdio>
#include <future>
#include <iostream>
#include <mutex>
#include <thread>

namespace callscope {

QString sourcesText(const Config& c) {
    return QString::fromStdString(
        (c.readsPostgres() ? redactDsn(c.postgres.dsn) : std::string("PostgreSQL not read")) +
        " \u00b7 " + (c.readsKafka() ? c.kafka.brokers : std::string("Kafka not read")));
}

namespace {

// Waits (running the event loop) until `done` or the timeout.
template <typename Done> bool waitFor(Done done, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeoutMs)
        QApplication::processEvents(QEventLoop::AllEvents, 50);
    return done();
}

int takeScreenshots(MainWindow& w, const QString& dir) {
    QDir().mkpath(dir);
    w.flush();
    const auto save = [&](MainWindow::Tab tab, const char* name) {
        w.showTab(tab);
        QApplication::processEvents();
        const QString path = dir + QLatin1Char('/') + QString::fromUtf8(name);
        if (!w.grab().save(path)) {
            std::cerr << "callscope demo: cannot write " << path.toStdString() << '\n';
            return false;
        }
        std::cerr << "callscope demo: wrote " << path.toStdString() << '\n';
        return true;
    };
    // A notification of new critical anomalies (the demo opens them all the
    // time), then the tabs without it.
    waitFor([&] { return w.notifier()->toast()->isVisible(); }, 30'000);
    bool ok = save(MainWindow::OverviewTab, "notification.png");
    w.notifier()->toast()->hide();
    ok = ok && save(MainWindow::OverviewTab, "overview.png") &&
         save(MainWindow::AnomaliesTab, "anomalies.png") &&
         save(MainWindow::InstancesTab, "instances.png");
    // The advisor measures when first shown: the picture once it has.
    w.showTab(MainWindow::AdvisorTab);
    waitFor([&] { return w.advisor()->measured(); }, 10'000);
    ok = ok && save(MainWindow::AdvisorTab, "advisor.png");
    // The drill-down of the most severe open anomaly (a key rotation if any).
    const AnomalyTableModel* model = w.anomalyModel();
    int best = -1;
    for (int r = 0; r < model->rowCount(); ++r) {
        const Anomaly& a = model->anomaly(r);
        if (!a.open)
            continue;
        if (best < 0) {
            best = r;
            continue;
        }
        const Anomaly& b = model->anomaly(best);
        if (a.severity > b.severity ||
            (a.severity == b.severity && a.kind == AnomalyKind::KeyRotation &&
             b.kind != AnomalyKind::KeyRotation))
            best = r;
    }
    if (best >= 0) {
        const Anomaly& a = model->anomaly(best);
        w.openCall(QString::fromStdString(a.callIds.back()));
        waitFor(
            [&] {
                return w.drilldown()->currentCallId() == QString::fromStdString(a.callIds.back());
            },
            20'000);
    }
    ok = ok && save(MainWindow::DrilldownTab, "drilldown.png");
    return ok ? ExitOk : ExitRuntime;
}

// The application object every dashboard runs in: names for QSettings, the
// desktop file and icon, the theme the user chose last. Screenshots
// (`offscreenIfHeadless`) use settings of their own, thrown away after: the
// pictures do not depend on the user's saved columns, tab or theme.
std::unique_ptr<QApplication> makeApplication(int& argc, char** argv, bool offscreenIfHeadless) {
    if (offscreenIfHeadless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    auto app = std::make_unique<QApplication>(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("callscope"));
    QApplication::setApplicationName(QStringLiteral("callscope"));
    QApplication::setApplicationVersion(QString::fromUtf8(callscopeVersion()));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.callscope.Callscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/io.github.callscope.Callscope.svg")));
    if (offscreenIfHeadless) {
        static QTemporaryDir settings;
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
    }
    initTheme();
    return app;
}

// Loads a config chosen in the GUI; refusals are shown, not printed only.
std::optional<Config> loadConfigShown(const QString& path, QWidget* parent) {
    ConfigResult r = loadConfigFile(path.toStdString());
    if (r.ok())
        return std::move(r.config);
    QStringList lines;
    for (const auto& e : r.errors) {
        lines << QString::fromStdString(visibleText(e.toString()));
        std::cerr << "callscope gui: " << lines.back().toStdString() << '\n';
    }
    QMessageBox box(QMessageBox::Warning, QObject::tr("callscope"),
                    QObject::tr("The config file was refused."), QMessageBox::Ok, parent);
    box.setInformativeText(path);
    box.setDetailedText(lines.join(QLatin1Char('\n')));
    box.setTextFormat(Qt::PlainText);
    box.exec();
    return std::nullopt;
}

// Without --config: the one used last, the default file, or a file dialog.
std::optional<std::pair<Config, QString>> chooseConfig() {
    QStringList candidates;
    const QString last = MainWindow::lastConfigPath();
    if (!last.isEmpty())
        candidates << last;
    candidates << QString::fromStdString(defaultConfigPath());
    for (const QString& path : candidates)
        if (QFileInfo::exists(path))
            if (auto c = loadConfigShown(path, nullptr))
                return std::pair{std::move(*c), path};
    for (;;) {
        const QString path = QFileDialog::getOpenFileName(
            nullptr, QObject::tr("Open a callscope config"), QDir::homePath(),
            QObject::tr("callscope config (*.toml);;All files (*)"));
        if (path.isEmpty())
            return std::nullopt;
        if (auto c = loadConfigShown(path, nullptr))
            return std::pair{std::move(*c), path};
    }
}

int runDashboard(const Config& config, const QString& configPath, MonitorOptions options,
                 EpochMillis since, const QString& callId, const QString& screenshotDir,
                 int afterSeconds, QSize size = {}) {
    MainWindow window(sourcesText(config));
    if (size.isValid())
        window.resize(size);
    window.setDeployment(sourcesOf(config));
    DashboardController dashboard(config, options, &window);
    if (!configPath.isEmpty()) {
        window.setConfigPath(configPath);
        // File > Open config and Recent: the same monitor on another config.
        QObject::connect(&window, &MainWindow::configRequested, &window, [&](const QString& path) {
            if (auto c = loadConfigShown(path, &window)) {
                dashboard.setConfig(*c);
                window.setSources(sourcesText(*c));
                window.setDeployment(sourcesOf(*c));
                window.setConfigPath(path);
            }
        });
    }
    dashboard.start(since);
    window.show();
    if (!callId.isEmpty())
        QTimer::singleShot(0, &window, [&] { window.openCall(callId); });
    if (!screenshotDir.isEmpty()) {
        int code = ExitRuntime;
        QTimer::singleShot(afterSeconds * 1000, &window, [&] {
            code = takeScreenshots(window, screenshotDir);
            QApplication::quit();
        });
        QApplication::exec();
        return code;
    }
    return QApplication::exec() == 0 ? ExitOk : ExitRuntime;
}

} // namespace

int runGuiCommand(int argc, char** argv, const GuiOptions& options) {
    const Millis window = parseDuration(options.since).value_or(Millis{0}); // checked
    // A config named on the command line is checked before any window opens.
    std::optional<Config> config;
    QString configPath;
    if (options.config) {
        config = loadConfigOrReport(options.config);
        if (!config)
            return ExitUsage;
        configPath = QFileInfo(QString::fromStdString(*options.config)).absoluteFilePath();
    }
    const auto app = makeApplication(argc, argv, false);
    if (!config) {
        auto chosen = chooseConfig();
        if (!chosen) {
            std::cerr << "callscope gui: no config chosen\n";
            return ExitOk;
        }
        config = std::move(chosen->first);
        configPath = QFileInfo(chosen->second).absoluteFilePath();
    }
    return runDashboard(*config, configPath, {}, nowMillis() - window.count(),
                        QString::fromStdString(options.callId), {}, 0);
}

int runDemoCommand(int argc, char** argv, const DemoOptions& options) {
    // Before anything is started: a signal while PostgreSQL starts is then
    // noticed after it, and the destructor cleans up.
    recordDemoSignals();
    std::unique_ptr<DemoEnvironment> env;
    try {
        env = std::make_unique<DemoEnvironment>();
    } catch (const std::exception& e) {
        std::cerr << "callscope demo: " << visibleText(e.what()) << '\n';
        return ExitRuntime;
    }
    if (demoSignalled())
        return ExitRuntime; // interrupted while starting: the destructor cleans up
    const Config config = env->config();
    // The simulator runs until the dashboard closes, with every fault kind on.
    std::atomic<bool> stopSim{false};
    SimOptions sim;
    sim.duration = Millis{24 * 3'600'000};
    sim.rate = 25;
    sim.crashRate = 0.01;
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
        sim.faults[static_cast<AnomalyKind>(i)] = 0.006;
    sim.regeneratedRate = 0.006;
    sim.receiptTopic = DemoEnvironment::kReceiptTopic;
    sim.createTopics = false;
    sim.allowWritesTo = DemoEnvironment::kDatabase;
    sim.drainTimeout = Millis{1000};
    std::mutex simMutex;
    std::string simError; // under simMutex: the simulator's thread writes it
    const auto simFailure = [&] {
        std::lock_guard lock(simMutex);
        return simError;
    };
    // The dashboard opens once the simulator has made its tables and topics
    // (or has failed): it would refuse a database without them.
    std::promise<void> prepared;
    std::once_flag preparedOnce;
    const auto markPrepared = [&] { std::call_once(preparedOnce, [&] { prepared.set_value(); }); };
    sim.ready = markPrepared;
    std::thread simulator([&] {
        const SimResult r = runSimulation(config, sim, &stopSim);
        if (!r.ok) {
            std::lock_guard lock(simMutex);
            simError = r.error;
        }
        markPrepared();
    });
    auto ready = prepared.get_future();
    const auto waiting = [&] {
        return ready.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready;
    };
    for (int waited = 0; waited < 600 && !demoSignalled() && waiting(); ++waited) {
    }
    if (!simFailure().empty() || demoSignalled()) { // failed, or Ctrl+C: no dashboard
        stopSim = true;
        simulator.join();
        if (!simError.empty())
            std::cerr << "callscope demo: simulator: " << visibleText(simError) << '\n';
        return ExitRuntime;
    }
    std::cerr << "callscope demo: PostgreSQL " << redactDsn(config.postgres.dsn) << ", mock Kafka "
              << config.kafka.brokers << "; simulating with every anomaly kind\n";
    const QString dir = QString::fromStdString(options.screenshotDir);
    int code = ExitRuntime;
    {
        const auto app = makeApplication(argc, argv, !dir.isEmpty());
        QTimer signalWatch;
        QObject::connect(&signalWatch, &QTimer::timeout, [] {
            if (demoSignalled())
                QCoreApplication::quit();
        });
        signalWatch.start(200);
        int w = 1400, h = 900;
        std::sscanf(options.size.c_str(), "%dx%d", &w, &h); // checked by the option table
        code = runDashboard(config, {}, MonitorOptions{true}, 0, {}, dir, options.afterSeconds,
                            dir.isEmpty() ? QSize() : QSize(w, h));
    }
    stopSim = true;
    simulator.join();
    if (!simError.empty())
        std::cerr << "callscope demo: simulator: " << visibleText(simError) << '\n';
    return code;
}

} // namespace callscope
