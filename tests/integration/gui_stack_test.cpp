// The dashboard against the real PostgreSQL and Kafka, fed by the simulator:
// the anomalies arrive in the table, and searching a callId and a bizNo opens
// the drill-down with the diagnosis.
#include "app/dashboard_controller.h"
#include "connectors/simulator.h"
#include "sim_data.h"
#include "stack.h"
#include "views/anomaly_table_model.h"
#include "views/drilldown_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTextBrowser>

#include <gtest/gtest.h>

using namespace callscope;
using namespace callscope::test;

namespace {

template <typename Done>
bool waitFor(Done done, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeoutMs)
        QApplication::processEvents(QEventLoop::AllEvents, 50);
    return done();
}

} // namespace

TEST(Dashboard, ShowsTheSimulatorsAnomaliesAndFindsACallIdAndABizNo) {
    TestStack s = TestStack::fresh("gui");
    SimOptions o;
    o.duration = Millis{3000};
    o.rate = 30;
    o.seed = 5;
    o.faults[AnomalyKind::KeyRotation] = 0.1;
    o.faults[AnomalyKind::DigestConflict] = 0.1;
    o.receiptTopic = s.receiptTopic;
    o.callerTopic = s.callerTopic;
    const TempFile truthFile("gui-truth.jsonl");
    o.truthPath = truthFile.path;
    const SimResult r = runSimulation(s.config, o);
    ASSERT_TRUE(r.ok) << r.error;
    const Situations truth = readAnomalyLines(readFile(truthFile.path));
    ASSERT_TRUE(truth.count("key_rotation"));
    std::size_t expected = 0;
    for (const auto& [k, sets] : truth)
        expected += sets.size();

    Config config = s.config;
    config.kafka.receiptTopics = s.receiptTopic;
    MainWindow window(QStringLiteral("test stack"));
    window.resize(1400, 900);
    DashboardController dashboard(config, {}, &window);
    dashboard.start(nowMillis() - 10 * 60'000);
    window.show();

    ASSERT_TRUE(waitFor([&] { window.flush(); return window.anomalyModel()->rowCount() >= int(expected); },
                        60'000))
        << window.anomalyModel()->rowCount() << " of " << expected;
    window.showTab(MainWindow::AnomaliesTab);
    window.grab().save(QStringLiteral("gui-stack-anomalies.png"));

    const std::string pair = *truth.at("key_rotation").begin();
    const QString second = QString::fromStdString(pair.substr(pair.find(',') + 1));
    window.openCall(second);
    ASSERT_TRUE(waitFor([&] { return window.drilldown()->currentCallId() == second; }, 20'000));
    EXPECT_TRUE(window.drilldown()->details()->toPlainText().contains(QStringLiteral("Key rotated")));
    window.grab().save(QStringLiteral("gui-stack-drilldown.png"));

    // Export the drill-down's call as a PDF from the dashboard, as the menu does.
    const TempFile pdf("gui-export.pdf");
    emit window.reportRequested(QStringList{second}, QString::fromStdString(pdf.path), false);
    ASSERT_TRUE(waitFor([&] { return readFile(pdf.path).size() > 1000; }, 30'000));
    QApplication::processEvents();
    const CommandResult text = runCommand("pdftotext " + pdf.path + " -");
    EXPECT_NE(text.out.find("callId " + second.toStdString()), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("Key rotated"), std::string::npos);

    // The bizNo of that business action names both of its callIds.
    const SimData data = loadSimData(s.dsn, s.brokers, s.receiptTopic, s.callerTopic);
    const QString bizNo = QString::fromStdString(data.callerEvents.at(second.toStdString()).front().bizNo);
    const QString first = QString::fromStdString(pair.substr(0, pair.find(',')));
    window.openCall(bizNo);
    ASSERT_TRUE(waitFor([&] {
        const QString c = window.drilldown()->currentCallId();
        return (c == first || c == second) &&
               window.drilldown()->details()->toPlainText().contains(QStringLiteral("several callIds"));
    }, 20'000)) << window.drilldown()->currentCallId().toStdString();
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
