// Issue 12: the dashboard's search of callIds outside memory. A dashboard
// (MainWindow and its DashboardController, offscreen, as `callscope gui`
// runs them) follows the config's sources with nothing loaded (`--since 0s`),
// then each callId given is searched in turn and timed from the search to
// its call shown in the drill-down: read by key from PostgreSQL and from one
// partition per topic, as `inspect` reads it, in a process already running.
// The first callId is searched untimed (it opens the cold readers'
// connections, which the dashboard then keeps). Prints each time, the median
// (target <= 100 ms) and the maximum; exit 1 when a call is not shown within
// 20 s. bench/cold-drilldown runs it on its data. --shot FILE saves the
// window as the last call is shown (PNG), to look at.
//   callscope_cold_search --config F [--shot FILE] CALLID CALLID...
#include "app/dashboard_controller.h"
#include "connectors/config.h"
#include "models/timestamp.h"
#include "views/drilldown_view.h"
#include "views/main_window.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace callscope;

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    std::string configPath;
    QString shot;
    std::vector<QString> ids;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc)
            configPath = argv[++i];
        else if (a == "--shot" && i + 1 < argc)
            shot = QString::fromUtf8(argv[++i]);
        else
            ids.push_back(QString::fromUtf8(argv[i]));
    }
    if (configPath.empty() || ids.size() < 2) {
        std::fprintf(stderr,
                     "usage: callscope_cold_search --config F [--shot FILE] CALLID CALLID...\n");
        return 2;
    }
    const ConfigResult loaded = loadConfigFile(configPath);
    if (!loaded.ok()) {
        std::fprintf(stderr, "callscope_cold_search: %s\n",
                     loaded.errors.front().toString().c_str());
        return 2;
    }
    MainWindow window(QStringLiteral("cold search"));
    window.resize(1400, 900);
    window.setDeployment(sourcesOf(loaded.config));
    DashboardController dashboard(loaded.config, {}, &window);
    dashboard.start(nowMillis());
    window.show();
    // From the search to the call in the drill-down, painted; -1 when not shown.
    const auto search = [&](const QString& id) -> qint64 {
        QElapsedTimer t;
        t.start();
        window.openCall(id);
        while (window.drilldown()->currentCallId() != id) {
            if (t.elapsed() > 20'000)
                return -1;
            QApplication::processEvents(QEventLoop::AllEvents, 1);
        }
        QApplication::processEvents(); // (the drill-down painted)
        return t.elapsed();
    };
    if (search(ids.front()) < 0) {
        std::fprintf(stderr, "search %s: not shown within 20 s\n", qPrintable(ids.front()));
        return 1;
    }
    std::vector<qint64> times;
    for (std::size_t i = 1; i < ids.size(); ++i) {
        const qint64 ms = search(ids[i]);
        if (ms < 0) {
            std::fprintf(stderr, "search %s: not shown within 20 s\n", qPrintable(ids[i]));
            return 1;
        }
        times.push_back(ms);
        std::printf("search %s: %lld ms\n", qPrintable(ids[i]), static_cast<long long>(ms));
    }
    if (!shot.isEmpty() && !window.grab().save(shot))
        std::fprintf(stderr, "callscope_cold_search: could not write %s\n", qPrintable(shot));
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    const double median = n % 2 ? double(times[n / 2]) : (times[n / 2 - 1] + times[n / 2]) / 2.0;
    std::printf("dashboard search of a cold callId: median %.1f ms (target <= 100), max %lld ms, "
                "n=%zu\n",
                median, static_cast<long long>(times.back()), n);
    return 0;
}
