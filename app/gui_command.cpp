// callscope gui and callscope demo (SPEC §4.1, §6): the dashboard, wired to a
// model thread that owns the sources and the store.
#include "app/gui_command.h"

#include "app/cli_args.h"
#include "app/dashboard_controller.h"
#include "app/demo_environment.h"
#include "connectors/simulator.h"
#include "views/anomaly_table_model.h"
#include "views/drilldown_view.h"
#include "views/main_window.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QPointer>
#include <QThread>
#include <QTimer>

#include <iostream>
#include <thread>

namespace callscope {
namespace {

const char* kGuiUsage = R"(usage: callscope gui [--config FILE] [--since D] [--call-id ID]

Opens the dashboard on the config's PostgreSQL and Kafka.
  --since D     the window to load first (default 15m); "0s" for live only
  --call-id ID  open this callId (or bizNo) in the drill-down
)";

const char* kDemoUsage = R"(usage: callscope demo [--screenshot DIR --after SECONDS]

Starts a throwaway PostgreSQL and an in-process Kafka (librdkafka's mock
cluster), runs the simulator with every anomaly kind injected, and opens the
dashboard on it. Everything is removed on exit.
  --screenshot DIR  write overview.png, anomalies.png, drilldown.png and
                    instances.png into DIR after --after seconds, then exit
)";

QString sourcesText(const Config& c) {
    return QString::fromStdString(redactDsn(c.postgres.dsn) + " \u00b7 " + c.kafka.brokers);
}

// Waits (running the event loop) until `done` or the timeout.
template <typename Done>
bool waitFor(Done done, int timeoutMs) {
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
    bool ok = save(MainWindow::OverviewTab, "overview.png") &&
              save(MainWindow::AnomaliesTab, "anomalies.png") &&
              save(MainWindow::InstancesTab, "instances.png");
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
        waitFor([&] { return w.drilldown()->currentCallId() == QString::fromStdString(a.callIds.back()); },
                20'000);
    }
    ok = ok && save(MainWindow::DrilldownTab, "drilldown.png");
    return ok ? ExitOk : ExitRuntime;
}

int runDashboard(int argc, char** argv, const Config& config, MonitorOptions options,
                 EpochMillis since, const QString& callId, const QString& screenshotDir,
                 int afterSeconds) {
    if (!screenshotDir.isEmpty() && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("callscope"));
    QApplication::setApplicationName(QStringLiteral("callscope"));
    MainWindow window(sourcesText(config));
    DashboardController dashboard(config, options, &window);
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

int runGuiCommand(int argc, char** argv, std::vector<std::string> words) {
    CliArgs args(std::move(words));
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << kGuiUsage;
        return ExitOk;
    }
    const auto configPath = args.value("--config");
    const auto sinceText = args.value("--since");
    const auto callId = args.value("--call-id");
    std::string error;
    if (!args.finish(error)) {
        std::cerr << "callscope gui: " << error << '\n';
        return ExitUsage;
    }
    const auto window = parseDuration(sinceText.value_or("15m"));
    if (!window && sinceText != std::optional<std::string>("0s")) {
        std::cerr << "callscope gui: --since: expected a duration such as 15m\n";
        return ExitUsage;
    }
    const auto config = loadConfigOrReport(configPath);
    if (!config)
        return ExitUsage;
    return runDashboard(argc, argv, *config, {}, nowMillis() - (window ? window->count() : 0),
                        QString::fromStdString(callId.value_or("")), {}, 0);
}

int runDemoCommand(int argc, char** argv, std::vector<std::string> words) {
    CliArgs args(std::move(words));
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << kDemoUsage;
        return ExitOk;
    }
    const auto dir = args.value("--screenshot");
    const auto after = args.value("--after");
    std::string error;
    if (!args.finish(error)) {
        std::cerr << "callscope demo: " << error << '\n';
        return ExitUsage;
    }
    int afterSeconds = 60;
    if (after) {
        char* end = nullptr;
        afterSeconds = static_cast<int>(std::strtol(after->c_str(), &end, 10));
        if (after->empty() || *end || afterSeconds < 1 || afterSeconds > 3600) {
            std::cerr << "callscope demo: --after: expected seconds from 1 to 3600\n";
            return ExitUsage;
        }
    }
    std::unique_ptr<DemoEnvironment> env;
    try {
        env = std::make_unique<DemoEnvironment>();
    } catch (const std::exception& e) {
        std::cerr << "callscope demo: " << e.what() << '\n';
        return ExitRuntime;
    }
    removeDemoOnSignal();
    const Config config = env->config();
    // The simulator runs until the dashboard closes, with every fault kind on.
    std::atomic<bool> stopSim{false};
    SimOptions sim;
    sim.duration = Millis{24 * 3'600'000};
    sim.rate = 25;
    sim.crashRate = 0.01;
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
        sim.faults[static_cast<AnomalyKind>(i)] = 0.006;
    sim.receiptTopic = DemoEnvironment::kReceiptTopic;
    sim.createTopics = false;
    sim.drainTimeout = Millis{1000};
    std::string simError;
    std::thread simulator([&] {
        const SimResult r = runSimulation(config, sim, &stopSim);
        if (!r.ok)
            simError = r.error;
    });
    std::cerr << "callscope demo: PostgreSQL " << redactDsn(config.postgres.dsn) << ", mock Kafka "
              << config.kafka.brokers << "; simulating with every anomaly kind\n";
    const int code = runDashboard(argc, argv, config, MonitorOptions{true}, 0, {},
                                  QString::fromStdString(dir.value_or("")), afterSeconds);
    stopSim = true;
    simulator.join();
    if (!simError.empty())
        std::cerr << "callscope demo: simulator: " << simError << '\n';
    return code;
}

} // namespace callscope
