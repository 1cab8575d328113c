// The dashboard's widgets offscreen, fed directly (no servers): the anomaly
// table sorts, filters and opens the drill-down; the timeline draws both
// lanes with the right bands; the item models pass QAbstractItemModelTester.
#include "models/call_store.h"
#include "models/diagnosis.h"
#include "views/anomalies_view.h"
#include "views/anomaly_table_model.h"
#include "views/drilldown_view.h"
#include "views/instances_view.h"
#include "views/main_window.h"
#include "views/overview_view.h"
#include "views/palette.h"
#include "views/timeline_painter.h"
#include "views/timeline_widget.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QHeaderView>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000;

// Screenshots go into the build tree (screenshots/ beside the test binary), or
// where CALLSCOPE_SCREENSHOTS says, never into the current directory.
QString shot(const char* name) {
    QString dir = qEnvironmentVariable("CALLSCOPE_SCREENSHOTS");
    if (dir.isEmpty())
        dir = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots");
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + QLatin1String(name);
}

Anomaly anomaly(std::uint64_t id, AnomalyKind kind, Severity sev, std::vector<std::string> ids,
                std::string instance, bool open = true) {
    Anomaly a;
    a.id = id;
    a.kind = kind;
    a.severity = sev;
    a.callIds = std::move(ids);
    a.instances = {std::move(instance)};
    a.open = open;
    a.firstEventAt = T0 + static_cast<EpochMillis>(id) * 1000;
    a.detectedAt = a.firstEventAt + 100;
    a.summary = "summary of " + std::string(toString(kind));
    return a;
}

std::vector<AnomalyChange> sample() {
    return {{ChangeKind::Opened,
             anomaly(1, AnomalyKind::StuckProcessing, Severity::Warning, {"c-stuck"}, "api-1")},
            {ChangeKind::Opened,
             anomaly(2, AnomalyKind::KeyRotation, Severity::Critical, {"c-a", "c-b"}, "api-2")},
            {ChangeKind::Opened,
             anomaly(3, AnomalyKind::OrphanReceipt, Severity::Info, {"c-orphan"}, "")},
            {ChangeKind::Opened,
             anomaly(4, AnomalyKind::CallerStuck, Severity::Warning, {"c-wait"}, "api-1", false)}};
}

CallTimeline scriptedTimeline() {
    CallStore s;
    const std::string d(64, 'a');
    CallerObservation e{"c1", CallerState::Initiated, T0, "api-1", 0, "B1", d, "t", {}};
    s.add(e);
    e.state = CallerState::AwaitingResponse;
    e.at = T0 + 1;
    e.attempt = 1;
    s.add(e);
    s.add(RecordObservation{"c1", d, RecordStatus::Processing, "api-1", 0, T0 + 2, T0 + 2,
                            T0 + 86'400'000});
    AttemptObservation a;
    a.callId = "c1";
    a.digest = d;
    a.sourceInstance = "api-1";
    a.arrivedAt = T0 + 2;
    a.finishedAt = T0 + 400;
    s.add(a);
    s.add(RecordObservation{"c1", d, RecordStatus::Success, "api-1", 0, T0 + 2, T0 + 400,
                            T0 + 86'400'000});
    ReceiptObservation r;
    r.callId = "c1";
    r.status = RecordStatus::Success;
    r.version = 2;
    r.origin.kafkaTimestamp = T0 + 420;
    r.sourceInstance = "pay-1";
    s.add(r);
    e.state = CallerState::ConfirmedSuccess;
    e.at = T0 + 401;
    s.add(e);
    return buildTimeline(s, 0, T0 + 800);
}

} // namespace

TEST(AnomalyTable, ModelPassesTheTesterAndAppliesBatches) {
    AnomalyTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    model.applyChanges(sample());
    EXPECT_EQ(model.rowCount(), 4);
    EXPECT_EQ(inserted.count(), 1); // one insert for the whole batch
    Anomaly resolved = model.anomaly(0);
    resolved.open = false;
    model.applyChanges({{ChangeKind::Resolved, resolved}});
    EXPECT_EQ(model.rowCount(), 4);
    EXPECT_EQ(model.index(0, AnomalyTableModel::State).data().toString(),
              QStringLiteral("resolved"));
}

// Anomalies the engine forgot over its memory budget leave the table (and
// its open counts); the rest keep their rows.
TEST(AnomalyTable, ForgottenAnomaliesLeaveTheTable) {
    AnomalyTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.applyChanges(sample());
    ASSERT_EQ(model.openCount(AnomalyKind::StuckProcessing), 1);
    const auto all = sample();
    model.applyChanges({{ChangeKind::Forgotten, all[0].anomaly},
                        {ChangeKind::Forgotten, all[2].anomaly},
                        {ChangeKind::Forgotten, all[1].anomaly}, // rows 0-2: one run
                        {ChangeKind::Opened, anomaly(5, AnomalyKind::StuckProcessing,
                                                     Severity::Warning, {"c-new"}, "api-1")},
                        {ChangeKind::Forgotten, anomaly(5, AnomalyKind::StuckProcessing,
                                                        Severity::Warning, {"c-new"}, "api-1")}});
    ASSERT_EQ(model.rowCount(), 1);
    EXPECT_EQ(model.anomaly(0).id, 4u);
    EXPECT_EQ(model.openCount(AnomalyKind::StuckProcessing), 0);
    EXPECT_EQ(model.openCount(AnomalyKind::OrphanReceipt), 0);
    EXPECT_EQ(model.openCount(AnomalyKind::KeyRotation), 0);
    Anomaly changed = model.anomaly(0); // rows found by id after the removal
    changed.open = true;
    model.applyChanges({{ChangeKind::Changed, changed}});
    EXPECT_EQ(model.openCount(AnomalyKind::CallerStuck), 1);

    // Scattered rows (every other one of 40): removed in one pass.
    std::vector<AnomalyChange> many, forget;
    for (std::uint64_t id = 10; id < 50; ++id) {
        many.push_back(
            {ChangeKind::Opened, anomaly(id, AnomalyKind::StuckProcessing, Severity::Warning,
                                         {"c" + std::to_string(id)}, "api-1")});
        if (id % 2 == 0)
            forget.push_back({ChangeKind::Forgotten, many.back().anomaly});
    }
    model.applyChanges(many);
    ASSERT_EQ(model.rowCount(), 41);
    model.applyChanges(forget);
    ASSERT_EQ(model.rowCount(), 21);
    EXPECT_EQ(model.openCount(AnomalyKind::StuckProcessing), 20);
    for (int r = 1; r < model.rowCount(); ++r)
        EXPECT_EQ(model.anomaly(r).id % 2, 1u);
    changed = model.anomaly(20);
    changed.open = false;
    model.applyChanges({{ChangeKind::Resolved, changed}});
    EXPECT_EQ(model.openCount(AnomalyKind::StuckProcessing), 19);
}

TEST(AnomalyTable, SortsFiltersAndOpensTheDrillDown) {
    AnomalyTableModel model;
    model.applyChanges(sample());
    AnomaliesView view(&model);
    view.resize(1200, 500);
    QAbstractItemModelTester tester(view.filter(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    auto* proxy = view.filter();
    EXPECT_EQ(proxy->rowCount(), 3); // resolved hidden until asked
    // Sorted by severity, most severe first.
    EXPECT_EQ(proxy->index(0, AnomalyTableModel::Kind).data().toString(),
              QStringLiteral("key_rotation"));
    EXPECT_EQ(proxy->index(2, AnomalyTableModel::Kind).data().toString(),
              QStringLiteral("orphan_receipt"));
    proxy->setShowResolved(true);
    EXPECT_EQ(proxy->rowCount(), 4);
    proxy->setKind(QStringLiteral("caller_stuck"));
    EXPECT_EQ(proxy->rowCount(), 1);
    proxy->setKind({});
    proxy->setMinSeverity(2);
    EXPECT_EQ(proxy->rowCount(), 1);
    proxy->setMinSeverity(0);
    proxy->setInstance(QStringLiteral("api-1"));
    EXPECT_EQ(proxy->rowCount(), 2);
    proxy->setInstance({});
    proxy->setText(QStringLiteral("C-ORPHAN"));
    EXPECT_EQ(proxy->rowCount(), 1);
    proxy->setText({});

    QSignalSpy open(&view, &AnomaliesView::openCall);
    view.table()->setCurrentIndex(proxy->index(0, 0));
    QTest::keyClick(view.table(), Qt::Key_Return);
    ASSERT_EQ(open.count(), 1);
    EXPECT_EQ(open.at(0).at(0).toString(), QStringLiteral("c-a"));
    view.grab().save(shot("anomalies-view.png"));
}

TEST(Timeline, BothLanesAreDrawnWithTheRightBands) {
    const CallTimeline t = scriptedTimeline();
    TimelineWidget w;
    w.resize(1000, 260);
    w.setTimeline(t, {});
    QImage img(w.size(), QImage::Format_ARGB32);
    img.fill(Qt::white);
    {
        QPainter p(&img);
        paintTimeline(p, TimelineLayout::forRect(QRectF(w.rect())), t, w.axis(), {}, w.palette());
    }
    img.save(shot("timeline.png"));
    const TimelineLayout l = TimelineLayout::forRect(QRectF(w.rect()));
    const auto colourAt = [&](const QRectF& lane, EpochMillis at) {
        return img.pixelColor(int(l.serverLane.left() + w.axis().x(at)),
                              int(lane.center().y() + 8));
    };
    // Server record: PROCESSING until T0+400, then SUCCESS.
    EXPECT_EQ(colourAt(l.serverLane, T0 + 200), stateColor("PROCESSING"));
    EXPECT_EQ(colourAt(l.serverLane, T0 + 415), stateColor("SUCCESS"));
    // Caller view: AWAITING_RESPONSE, then CONFIRMED_SUCCESS.
    EXPECT_EQ(colourAt(l.callerLane, T0 + 200), stateColor("AWAITING_RESPONSE"));
    EXPECT_EQ(colourAt(l.callerLane, T0 + 415), stateColor("CONFIRMED_SUCCESS"));
    // Hover finds the attempt marker.
    const QPointF atAttempt(l.serverLane.left() + w.axis().x(T0 + 2), l.attemptLane.center().y());
    const int k = timelineEntryAt(l, t, w.axis(), atAttempt);
    ASSERT_GE(k, 0);
    EXPECT_EQ(t.entries[static_cast<std::size_t>(k)].lane, Lane::Attempt);
}

TEST(Timeline, ZoomAndPanKeepTheLanesUsable) {
    TimelineWidget w;
    w.resize(1000, 260);
    w.setTimeline(scriptedTimeline(), {});
    const EpochMillis span = w.axis().to - w.axis().from;
    QTest::keyClick(&w, Qt::Key_Plus);
    EXPECT_LT(w.axis().to - w.axis().from, span);
    QTest::keyClick(&w, Qt::Key_0);
    EXPECT_EQ(w.axis().to - w.axis().from, span);
    const EpochMillis from = w.axis().from;
    QTest::keyClick(&w, Qt::Key_Left);
    EXPECT_LT(w.axis().from, from);
}

TEST(Drilldown, ShowsTheDiagnosisAndSiblingLinks) {
    DrilldownView v;
    v.resize(1200, 800);
    QSignalSpy asked(&v, &DrilldownView::callRequested);
    v.lookup(QStringLiteral("c1"));
    ASSERT_EQ(asked.count(), 1);
    CallDetail d;
    d.found = true;
    d.generation = v.generation();
    d.timeline = scriptedTimeline();
    d.diagnosis.verdict = "Key rotated on retry";
    d.diagnosis.siblingCallIds = {"c0"};
    d.diagnosis.steps = {{"Same callId for every try?", "no", true}};
    v.showDetail(d);
    EXPECT_EQ(v.currentCallId(), QStringLiteral("c1"));
    const QString html = v.details()->toHtml();
    EXPECT_TRUE(html.contains(QStringLiteral("Key rotated on retry")));
    EXPECT_TRUE(html.contains(QStringLiteral("call:c0")));
    // A late answer to an older lookup is ignored.
    v.lookup(QStringLiteral("c2"));
    v.showDetail(d);
    EXPECT_EQ(v.currentCallId(), QStringLiteral("c1"));
    v.grab().save(shot("drilldown-view.png"));
}

TEST(Instances, ModelPassesTheTesterAndSelectionFilters) {
    InstancesView v;
    QAbstractItemModelTester tester(v.model(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    v.setStats({{"api-1", 10, 2, 1, 0, 3}, {"api-2", 5, 0, 0, 1, 1}});
    v.setStats({{"api-1", 11, 2, 1, 0, 3}, {"api-2", 5, 0, 0, 1, 1}}); // in place
    ASSERT_EQ(v.model()->rowCount(), 2);
    // The update changed the figure in its row, not the rows.
    int api1 = -1;
    for (int r = 0; r < 2; ++r)
        if (v.model()->index(r, 0).data().toString() == QStringLiteral("api-1"))
            api1 = r;
    ASSERT_GE(api1, 0);
    EXPECT_EQ(v.model()->index(api1, 1).data().toInt(), 11);
    // Selecting a row names its instance; clearing the selection names none.
    QSignalSpy selected(&v, &InstancesView::instanceSelected);
    v.table()->selectRow(
        v.table()->model()->index(0, 0).data().toString() == QStringLiteral("api-2") ? 0 : 1);
    ASSERT_GE(selected.count(), 1);
    EXPECT_EQ(selected.last().at(0).toString(), QStringLiteral("api-2"));
    v.table()->clearSelection();
    EXPECT_EQ(selected.last().at(0).toString(), QString());
}

// In the main window, choosing an instance filters the anomalies to those
// naming it, and clearing the choice shows them all again.
TEST(Instances, ChoosingAnInstanceFiltersTheAnomalies) {
    MainWindow w(QStringLiteral("instances"));
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = T0;
    snap->changes = sample();
    snap->statsIncluded = true;
    snap->instances = {{"api-1", 4, 0, 0, 0, 1}, {"api-2", 2, 1, 0, 0, 1}};
    w.takeSnapshot(snap);
    w.flush();
    auto* proxy = w.anomalies()->filter();
    ASSERT_EQ(proxy->rowCount(), 3); // open ones
    InstancesView* v = w.instances();
    int api2 = -1;
    for (int r = 0; r < v->table()->model()->rowCount(); ++r)
        if (v->table()->model()->index(r, 0).data().toString() == QStringLiteral("api-2"))
            api2 = r;
    ASSERT_GE(api2, 0);
    v->table()->selectRow(api2);
    ASSERT_EQ(proxy->rowCount(), 1);
    EXPECT_EQ(proxy->index(0, AnomalyTableModel::Kind).data().toString(),
              QStringLiteral("key_rotation"));
    v->table()->clearSelection();
    EXPECT_EQ(proxy->rowCount(), 3);
}

TEST(MainWindow, ReadableOnADarkPalette) {
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    dark.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    dark.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x55));
    const QPalette old = QApplication::palette();
    QApplication::setPalette(dark);
    {
        MainWindow w(QStringLiteral("dark"));
        w.resize(1400, 900);
        auto snap = std::make_shared<DashboardSnapshot>();
        snap->at = T0;
        snap->changes = sample();
        snap->statsIncluded = true;
        snap->recordsByStatus = {3, 900, 40};
        snap->processingAges = {2, 1, 0, 0, 0, 0, 0, 0};
        w.takeSnapshot(snap);
        w.flush();
        w.showTab(MainWindow::OverviewTab);
        w.grab().save(shot("dark-overview.png"));
        CallDetail d;
        d.found = true;
        w.drilldown()->lookup(QStringLiteral("c1"));
        d.generation = w.drilldown()->generation();
        d.timeline = scriptedTimeline();
        d.diagnosis.verdict = "Executed once; no double execution.";
        w.drilldown()->showDetail(d);
        w.showTab(MainWindow::DrilldownTab);
        const QImage img = w.grab().toImage();
        img.save(shot("dark-drilldown.png"));
        // The timeline's background follows the palette, not a fixed white,
        // and the details' text is light on it (the palette's text colour).
        EXPECT_LT(img.pixelColor(img.width() - 20, 250).lightness(), 100);
        const QPalette used = w.drilldown()->details()->palette();
        EXPECT_LT(used.color(QPalette::Base).lightness(), 100);
        EXPECT_GT(used.color(QPalette::Text).lightness(), 180);
        // The overview's figures are readable too: no dark text on the dark window.
        w.showTab(MainWindow::OverviewTab);
        int checked = 0;
        for (QLabel* l : w.overview()->findChildren<QLabel*>())
            if (l->isVisibleTo(&w) && !l->text().isEmpty() && l->styleSheet().isEmpty()) {
                ++checked;
                EXPECT_GT(l->palette().color(l->foregroundRole()).lightness(), 150)
                    << l->text().toStdString();
            }
        EXPECT_GE(checked, 10) << "the tiles' titles and figures";
    }
    QApplication::setPalette(old);
}

namespace {
// A window state a user would leave behind: fed with anomalies, a call open.
void feed(MainWindow& w) {
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = T0;
    snap->changes = sample();
    snap->statsIncluded = true;
    snap->recordsByStatus = {3, 900, 40};
    snap->processingAges = {2, 1, 0, 0, 0, 0, 0, 0};
    w.takeSnapshot(snap);
    w.flush();
}

void showCall(MainWindow& w, const QString& callId) {
    w.openCall(callId);
    CallDetail d;
    d.found = true;
    d.generation = w.drilldown()->generation();
    d.timeline = scriptedTimeline();
    d.timeline.callId = callId.toStdString();
    d.diagnosis.verdict = "Executed once; no double execution.";
    w.drilldown()->showDetail(d);
}
} // namespace

TEST(MainWindow, ShortcutsDialogListsEveryMenuShortcutAndTheViewsKeys) {
    QSettings().clear();
    MainWindow w(QStringLiteral("postgres 127.0.0.1:5432 \u00b7 kafka 127.0.0.1:9092"));
    w.show();
    QDialog* d = w.showShortcuts();
    ASSERT_NE(d, nullptr);
    auto* table = d->findChild<QTableWidget*>();
    ASSERT_NE(table, nullptr);
    QStringList rows;
    for (int r = 0; r < table->rowCount(); ++r)
        rows << table->item(r, 0)->text() + QStringLiteral(" = ") + table->item(r, 1)->text();
    const QString all = rows.join(QLatin1Char('\n'));
    // Every menu action that has keys is listed, with the menu path.
    int withKeys = 0;
    for (QAction* top : w.menuBar()->actions())
        for (QAction* a : top->menu()->actions()) {
            if (a->menu())
                for (QAction* sub : a->menu()->actions())
                    withKeys += sub->shortcuts().isEmpty() ? 0 : 1;
            else
                withKeys += a->shortcuts().isEmpty() ? 0 : 1;
        }
    EXPECT_GE(withKeys, 10);
    EXPECT_GE(table->rowCount(), withKeys + 5) << all.toStdString();
    for (const char* expected :
         {"Ctrl+O = File \u203a Open config", "Ctrl+E = File \u203a Export report \u203a Selected",
          "Ctrl+1 = View \u203a Overview", "Ctrl+Q = File \u203a Quit",
          "Ctrl+4 = View \u203a Instances", "Ctrl+F = Go \u203a Find callId or bizNo",
          "F1, Ctrl+/ = Help \u203a Keyboard shortcuts", "Timeline: zoom in"})
        EXPECT_TRUE(all.contains(QString::fromUtf8(expected))) << expected << "\n"
                                                               << all.toStdString();
    // Every row fits: nothing hides below a scroll bar.
    EXPECT_FALSE(table->verticalScrollBar()->isVisible());
    d->grab().save(shot("shortcuts.png"));
    // One dialog, raised again rather than stacked.
    EXPECT_EQ(w.showShortcuts(), d);
}

TEST(MainWindow, LayoutTabSortAndSplitterComeBackAfterARestart) {
    QSettings().clear();
    QList<int> sizes;
    {
        MainWindow w(QStringLiteral("first run"));
        w.resize(1300, 820);
        w.show();
        ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
        feed(w);
        showCall(w, QStringLiteral("c1"));
        QCoreApplication::processEvents();
        QSplitter* split = w.drilldown()->splitter();
        const int total = split->sizes().value(0) + split->sizes().value(1);
        ASSERT_GT(total, 100);
        split->setSizes({total * 3 / 4, total - total * 3 / 4});
        sizes = split->sizes();
        w.anomalies()->table()->sortByColumn(AnomalyTableModel::Kind, Qt::DescendingOrder);
        w.showTab(MainWindow::AnomaliesTab);
        w.close(); // closing saves, as quitting does
    }
    MainWindow w(QStringLiteral("second run"));
    w.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
    feed(w);
    EXPECT_EQ(w.size(), QSize(1300, 820));
    const QHeaderView* h = w.anomalies()->table()->horizontalHeader();
    EXPECT_EQ(h->sortIndicatorSection(), AnomalyTableModel::Kind);
    EXPECT_EQ(h->sortIndicatorOrder(), Qt::DescendingOrder);
    // The rows really are in that order, not just the arrow.
    const auto* proxy = w.anomalies()->filter();
    EXPECT_EQ(proxy->index(0, AnomalyTableModel::Kind).data().toString(),
              QStringLiteral("stuck_processing"));
    EXPECT_TRUE(w.anomalies()->isVisible()); // the tab left open
    QCoreApplication::processEvents();
    w.grab().save(shot("restored-layout.png"));
    showCall(w, QStringLiteral("c1"));
    QCoreApplication::processEvents();
    const QList<int> restored = w.drilldown()->splitter()->sizes();
    ASSERT_EQ(restored.size(), sizes.size());
    for (int i = 0; i < sizes.size(); ++i)
        EXPECT_NEAR(restored[i], sizes[i], 2) << i;
    w.grab().save(shot("restored-drilldown.png"));
}

TEST(MainWindow, RecentCallIdsAreRememberedNewestFirstAndEscaped) {
    QSettings().clear();
    MainWindow w(QStringLiteral("recent"));
    showCall(w, QStringLiteral("c1"));
    showCall(w, QStringLiteral("R&D <b>call</b>"));
    showCall(w, QStringLiteral("c1")); // again: moves to the top, no duplicate
    EXPECT_EQ(w.recentCallIds(),
              (QStringList{QStringLiteral("c1"), QStringLiteral("R&D <b>call</b>")}));
    // A lookup that found nothing is not remembered.
    w.openCall(QStringLiteral("missing"));
    CallDetail none;
    none.generation = w.drilldown()->generation();
    w.drilldown()->showDetail(none);
    EXPECT_EQ(w.recentCallIds().size(), 2);
    QMenu* recent = nullptr;
    for (QMenu* m : w.findChildren<QMenu*>())
        if (m->title() == QStringLiteral("&Recent callIds"))
            recent = m;
    ASSERT_NE(recent, nullptr);
    ASSERT_GE(recent->actions().size(), 2);
    // The ampersand in data is shown, not taken as a mnemonic.
    EXPECT_EQ(recent->actions().at(1)->text(), QStringLiteral("&2  R&&D <b>call</b>"));
    // Choosing one looks it up in the drill-down.
    QSignalSpy asked(w.drilldown(), &DrilldownView::callRequested);
    recent->actions().at(1)->trigger();
    ASSERT_EQ(asked.count(), 1);
    EXPECT_EQ(asked.at(0).at(0).toString(), QStringLiteral("R&D <b>call</b>"));
    EXPECT_TRUE(w.drilldown()->isVisible() || !w.isVisible());
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    // Settings in a throwaway directory: never the user's, never shared between runs.
    QTemporaryDir settingsDir;
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir.path());
    QCoreApplication::setOrganizationName(QStringLiteral("callscope-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("views"));
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

// The status bar says what was lost on the way in: malformed messages,
// messages deleted by retention before they were read, and calls that left
// memory early because the store reached its budget — each with a tooltip.
TEST(MainWindow, StatusBarCountsRejectedLostAndEvicted) {
    MainWindow w(QStringLiteral("lost"));
    w.resize(1400, 900);
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = T0;
    snap->statsIncluded = true;
    snap->rejected = 3;
    snap->rejectedByReason = {{"not JSON", 2}, {"oversized field", 1}};
    snap->lostByPartition = {{"receipts.pay/3", 50}};
    snap->evictedCalls = 5000;
    snap->evictedOverBudget = 1200;
    snap->forgottenAnomalies = 40;
    snap->storeBudget = std::size_t{64} << 20;
    snap->storeBytes = std::size_t{50} << 20;
    SourceHealth kafka;
    kafka.source = "kafka";
    kafka.connected = true;
    kafka.note = "50 messages of receipts.pay/3 (offsets 100-149) were deleted by retention "
                 "before they were read";
    snap->sources.push_back(kafka);
    w.takeSnapshot(snap);
    w.flush();
    QLabel* counts = nullptr;
    for (QLabel* l : w.findChildren<QLabel*>())
        if (l->text().startsWith(QStringLiteral("Rejected:")))
            counts = l;
    ASSERT_NE(counts, nullptr);
    EXPECT_EQ(counts->text(),
              QStringLiteral("Rejected: 3  Lost: 50  Evicted: 1200  Forgotten: 40"));
    EXPECT_TRUE(counts->toolTip().contains(QStringLiteral("oversized field: 1")));
    EXPECT_TRUE(counts->toolTip().contains(
        QStringLiteral("receipts.pay/3: 50 messages deleted by retention")));
    EXPECT_TRUE(counts->toolTip().contains(QStringLiteral("budget of 64 MiB")));
    EXPECT_TRUE(counts->toolTip().contains(QStringLiteral("40 oldest anomalies were forgotten")));
    w.grab().save(shot("status-lost-evicted.png"));
}
