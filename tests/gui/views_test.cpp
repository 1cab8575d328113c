// The dashboard's widgets offscreen, fed directly (no servers): the anomaly
// table sorts, filters and opens the drill-down; the timeline draws both
// lanes with the right bands; the item models pass QAbstractItemModelTester.
#include "models/call_store.h"
#include "models/diagnosis.h"
#include "views/advisor_view.h"
#include "views/anomalies_view.h"
#include "views/anomaly_table_model.h"
#include "views/cached_text_delegate.h"
#include "views/clock.h"
#include "views/drilldown_view.h"
#include "views/instances_view.h"
#include "views/main_window.h"
#include "views/notifier.h"
#include "views/overview_view.h"
#include "views/palette.h"
#include "views/timeline_painter.h"
#include "views/timeline_widget.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDateTime>
#include <QDialog>
#include <QDir>
#include <QHeaderView>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QProxyStyle>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyleOptionHeader>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include <ctime>

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

static InstanceStats stats(const char* instance, int calls, int retries, int duplicateCallers,
                           int conflicts, int anomalies, bool caller = false, bool server = false) {
    InstanceStats s;
    s.caller = caller;
    s.server = server;
    s.instance = instance;
    s.calls = calls;
    s.retries = retries;
    s.duplicateCallers = duplicateCallers;
    s.conflicts = conflicts;
    s.anomalies = anomalies;
    return s;
}

TEST(Instances, ModelPassesTheTesterAndSelectionFilters) {
    InstancesView v;
    QAbstractItemModelTester tester(v.model(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    v.setStats({stats("api-1", 10, 2, 1, 0, 3), stats("api-2", 5, 0, 0, 1, 1)});
    v.setStats({stats("api-1", 11, 2, 1, 0, 3), stats("api-2", 5, 0, 0, 1, 1)}); // in place
    ASSERT_EQ(v.model()->rowCount(), 2);
    // The update changed the figure in its row, not the rows.
    int api1 = -1;
    for (int r = 0; r < 2; ++r)
        if (v.model()->index(r, 0).data().toString() == QStringLiteral("api-1"))
            api1 = r;
    ASSERT_GE(api1, 0);
    EXPECT_EQ(v.model()->index(api1, InstanceTableModel::Calls).data().toInt(), 11);
    // Selecting a row names its instance; clearing the selection names none.
    QSignalSpy selected(&v, &InstancesView::instanceSelected);
    v.table()->selectRow(
        v.table()->model()->index(0, 0).data().toString() == QStringLiteral("api-2") ? 0 : 1);
    ASSERT_GE(selected.count(), 1);
    EXPECT_EQ(selected.last().at(0).toString(), QStringLiteral("api-2"));
    v.table()->clearSelection();
    EXPECT_EQ(selected.last().at(0).toString(), QString());
}

// Each instance's lane: bars on one scale, a marker per duplicate caller,
// the span and what the marks mean above the table, a bar's figures on hover.
TEST(Instances, LanesShowEachInstanceOverTimeWithItsDuplicates) {
    InstancesView v;
    v.resize(1200, 300);
    const EpochMillis from = 1'700'000'000'000, to = from + 120 * 60'000; // a minute per bar
    InstanceStats a = stats("order-api-1", 60, 2, 1, 0, 1, true, false);
    InstanceStats b = stats("order-api-2\u202e<b>x</b>", 60, 5, 1, 0, 1, true, false);
    a.callsOverTime.assign(kLaneBuckets, 0);
    b.callsOverTime.assign(kLaneBuckets, 0);
    b.retriesOverTime.assign(kLaneBuckets, 0);
    for (std::size_t k = 0; k < 60; ++k) { // order-api-1 stops half way, order-api-2 takes over
        a.callsOverTime[k] = 1;
        b.callsOverTime[k + 60] = 1;
    }
    b.retriesOverTime[60] = 1;
    a.duplicates.push_back({from + 59 * 60'000, true});
    b.duplicates.push_back({from + 60 * 60'000, true});
    v.setStats({a, b}, from, to);
    ASSERT_EQ(v.model()->columnCount(), int(InstanceTableModel::ColumnCount));
    EXPECT_EQ(v.model()
                  ->headerData(InstanceTableModel::Activity, Qt::Horizontal, Qt::DisplayRole)
                  .toString(),
              QStringLiteral("Over time"));
    EXPECT_EQ(v.model()->laneMax(), 1);
    // Sorted by the lane, the instance busy last comes last.
    const QModelIndex lastA = v.model()->index(0, InstanceTableModel::Activity);
    EXPECT_EQ(lastA.data(InstanceTableModel::SortRole).toInt(), 59);
    const auto* axis = v.findChild<QLabel*>(QStringLiteral("lanesAxis"));
    ASSERT_NE(axis, nullptr);
    EXPECT_TRUE(axis->text().contains(QStringLiteral("1m 00s per bar")))
        << axis->text().toStdString();
    EXPECT_TRUE(axis->text().contains(QStringLiteral("migration")));
    v.show();
    const QImage img = v.grab().toImage();
    img.save(shot("instances-lanes.png"));
    // The lane column holds the instances' colours (bars were painted).
    const QRect cell =
        v.table()->visualRect(v.table()->model()->index(0, InstanceTableModel::Activity));
    const QPoint origin = v.table()->viewport()->mapTo(&v, cell.topLeft());
    int coloured = 0;
    for (int x = 0; x < cell.width(); x += 2)
        for (int y = 0; y < cell.height(); y += 2) {
            const QColor c = img.pixelColor(origin + QPoint(x, y));
            coloured += c.saturation() > 80;
        }
    EXPECT_GT(coloured, 50);
    v.setStats({}, kNoTime, kNoTime); // nothing held: no lanes, a word instead
    EXPECT_TRUE(axis->text().contains(QStringLiteral("nothing held")));
}

// The Advisor: a histogram per tail with its percentiles, the windows drawn,
// the arithmetic, and the callIds at risk (hostile ones shown escaped).
TEST(Advisor, ShowsTheTailsTheArithmeticAndTheCallsAtRisk) {
    AdvisorView v;
    v.resize(1200, 800);
    auto a = std::make_shared<Advice>();
    a->from = 1'700'000'000'000;
    a->to = a->from + 3'600'000;
    a->retryDelay.count = 3;
    a->retryDelay.p50 = a->retryDelay.p90 = 500;
    a->retryDelay.p99 = a->retryDelay.p999 = a->retryDelay.max = 2'800;
    a->retryDelay.histogram[bucketOf(500)] = 2;
    a->retryDelay.histogram[bucketOf(2'800)] = 1;
    a->observedWindow.count = 3;
    a->observedWindow.min = a->observedWindow.p50 = 1'000;
    a->recommendedWindowMs = 6'000;
    a->windowArithmetic = "window >= 2 x max(p99.9 retry delay 2.8 s, ...) = 6.0 s";
    a->windowsShorterThanRecommended = 3;
    a->atRisk = {"cid-1", "cid-\u202e<b>2</b>"};
    QSignalSpy asked(&v, &AdvisorView::adviceRequested);
    QSignalSpy opened(&v, &AdvisorView::callRequested);
    EXPECT_FALSE(v.measured());
    v.setAdvice(a);
    EXPECT_TRUE(v.measured());
    EXPECT_TRUE(v.recommendations()->text().contains(QStringLiteral("window >= 2 x max")));
    EXPECT_TRUE(v.recommendations()->text().contains(QStringLiteral("3 records shorter")));
    ASSERT_EQ(v.atRisk()->count(), 2);
    EXPECT_FALSE(v.atRisk()->item(1)->text().contains(QChar(0x202e)));
    EXPECT_TRUE(v.histogram(1)->toolTip().contains(QStringLiteral("p99.9 2.8 s")));
    EXPECT_TRUE(v.histogram(0)->toolTip().contains(QStringLiteral("nothing measured")));
    emit v.atRisk()->itemActivated(v.atRisk()->item(0));
    ASSERT_EQ(opened.count(), 1);
    EXPECT_EQ(opened.last().at(0).toString(), QStringLiteral("cid-1"));
    v.findChild<QPushButton*>()->click();
    ASSERT_EQ(asked.count(), 1);
    EXPECT_DOUBLE_EQ(asked.last().at(0).toDouble(), 2.0);
    v.show();
    const QImage img = v.grab().toImage();
    img.save(shot("advisor.png"));
    // The retry histogram has bars in the highlight colour.
    const QImage h = v.histogram(1)->grab().toImage();
    int bars = 0;
    const QColor hl = v.histogram(1)->palette().color(QPalette::Highlight);
    for (int y = 0; y < h.height(); y += 2)
        for (int x = 0; x < h.width(); x += 2)
            bars += h.pixelColor(x, y) == hl;
    EXPECT_GT(bars, 20);
}

// Notifications: only live openings of critical anomalies, coalesced into
// one message; a click opens the first callId; a muted kind stays quiet,
// remembered across restarts; data in the text is escaped.
TEST(Notifications, NewCriticalsAreCoalescedMutedAndOpenTheDrilldown) {
    QSettings().remove(QStringLiteral("notifications"));
    QMainWindow host;
    host.resize(1000, 700);
    host.statusBar()->showMessage(QStringLiteral("status"));
    host.show();
    auto* n = new Notifier(&host);
    QSignalSpy opened(n, &Notifier::callRequested);
    const auto opening = [](AnomalyKind k, Severity s, const std::string& id) {
        AnomalyChange c;
        c.what = ChangeKind::Opened;
        c.anomaly.kind = k;
        c.anomaly.severity = s;
        c.anomaly.callIds = {id};
        c.anomaly.summary = "summary of " + id;
        return c;
    };
    // The window's backlog is not news.
    n->take({opening(AnomalyKind::KeyRotation, Severity::Critical, "old")}, false);
    n->flushNow();
    EXPECT_FALSE(n->toast()->isVisible());
    // Live: criticals only, all in one message.
    n->take({opening(AnomalyKind::KeyRotation, Severity::Critical, "cid-\u202e<i>1</i>"),
             opening(AnomalyKind::ConcurrentExecution, Severity::Critical, "cid-2"),
             opening(AnomalyKind::DigestConflict, Severity::Warning, "cid-3"),
             opening(AnomalyKind::KeyRotation, Severity::Critical, "cid-4")},
            true);
    n->flushNow();
    ASSERT_TRUE(n->toast()->isVisible());
    EXPECT_EQ(n->lastTitle(), QStringLiteral("3 critical anomalies"));
    EXPECT_TRUE(
        n->lastText().contains(QStringLiteral("key_rotation \u00d72, concurrent_execution")))
        << n->lastText().toStdString();
    EXPECT_FALSE(n->lastText().contains(QChar(0x202e))) << "escaped";
    EXPECT_TRUE(n->toast()->geometry().bottom() < host.statusBar()->geometry().top());
    host.grab().save(shot("notification.png"));
    // A click on the toast's Open: the drill-down of the first callId.
    const auto buttons = n->toast()->findChildren<QPushButton*>();
    for (QPushButton* b : buttons)
        if (b->text() == QStringLiteral("Open"))
            b->click();
    ASSERT_EQ(opened.count(), 1);
    EXPECT_EQ(opened.last().at(0).toString(), QStringLiteral("cid-\u202e<i>1</i>"));
    EXPECT_FALSE(n->toast()->isVisible());
    // Muted: key_rotation says nothing more, also after a restart.
    n->setMuted(AnomalyKind::KeyRotation, true);
    n->take({opening(AnomalyKind::KeyRotation, Severity::Critical, "cid-5")}, true);
    n->flushNow();
    EXPECT_FALSE(n->toast()->isVisible());
    Notifier again(&host);
    EXPECT_TRUE(again.muted(AnomalyKind::KeyRotation));
    EXPECT_FALSE(again.muted(AnomalyKind::ConcurrentExecution));
    again.setMuted(AnomalyKind::KeyRotation, false);
    QSettings().remove(QStringLiteral("notifications"));
}

// In the main window, choosing an instance filters the anomalies to those
// naming it, and clearing the choice shows them all again.
TEST(Instances, ChoosingAnInstanceFiltersTheAnomalies) {
    MainWindow w(QStringLiteral("instances"));
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = T0;
    snap->changes = sample();
    snap->statsIncluded = true;
    snap->instances = {stats("api-1", 4, 0, 0, 0, 1), stats("api-2", 2, 1, 0, 0, 1)};
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

namespace {

SourceHealth sourceIn(const char* name, SourceState state, EpochMillis since) {
    SourceHealth h;
    h.source = name;
    h.connected = state != SourceState::Down;
    h.state = state;
    h.since = since;
    if (state == SourceState::Down) {
        h.lastError = "Kafka (127.0.0.1:1): Connection refused \x1b[31m";
        h.lastErrorAt = since;
    }
    h.lastDataAt = since - 5000;
    return h;
}

std::shared_ptr<DashboardSnapshot> snapshotAt(EpochMillis at, std::vector<SourceHealth> sources) {
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->at = at;
    snap->statsIncluded = true;
    snap->windowJudged = true;
    snap->recordsByStatus = {71, 400, 3};
    snap->receiptsPerSec = 0;
    snap->sources = std::move(sources);
    return snap;
}

QLabel* caption(OverviewView* o, const QString& title) {
    for (QLabel* l : o->findChildren<QLabel*>())
        if (l->text().startsWith(title))
            return l;
    return nullptr;
}

} // namespace

// Issue 15: a source that is down is shown at once in a banner that moves
// nothing, on its own indicator with the error, and the figures that depend
// on it are "—" marked stale, never zeros; those fed by both are partial.
TEST(MainWindow, AnOutageIsABannerAndStaleFiguresNotZeros) {
    MainWindow w(QStringLiteral("outage"));
    w.resize(1024, 700);
    w.show();
    w.takeSnapshot(snapshotAt(T0, {sourceIn("postgres", SourceState::Live, T0 - 60'000),
                                   sourceIn("kafka", SourceState::Live, T0 - 60'000)}));
    w.flush();
    auto* banner = w.findChild<QLabel*>(QStringLiteral("outageBanner"));
    ASSERT_TRUE(banner);
    EXPECT_FALSE(banner->isVisible());
    const QRect before = w.centralWidget()->geometry();
    const QRect tabsBefore = w.overview()->geometry();

    w.takeSnapshot(snapshotAt(T0 + 1000, {sourceIn("postgres", SourceState::Live, T0 - 60'000),
                                          sourceIn("kafka", SourceState::Down, T0 + 500)}));
    w.flush();
    EXPECT_TRUE(banner->isVisible());
    EXPECT_TRUE(banner->toolTip().contains(QStringLiteral("Kafka is down since")))
        << banner->toolTip().toStdString();
    EXPECT_TRUE(banner->toolTip().contains(QStringLiteral("Connection refused \\x1b[31m")))
        << "the error, its control bytes escaped";
    EXPECT_EQ(banner->text().count(QLatin1Char('\n')), 0) << "one line";
    EXPECT_EQ(w.centralWidget()->geometry(), before) << "the banner moves nothing";
    EXPECT_EQ(w.overview()->geometry(), tabsBefore);

    // The indicator says down, in red, with the error and since when.
    QLabel* kafka = nullptr;
    for (QLabel* l : w.findChildren<QLabel*>())
        if (l->text().contains(QStringLiteral("Kafka")) &&
            l->text().contains(QStringLiteral("<small>down")))
            kafka = l;
    ASSERT_TRUE(kafka);
    EXPECT_TRUE(kafka->text().contains(QStringLiteral("#d13b3b")));
    EXPECT_TRUE(kafka->toolTip().contains(QStringLiteral("last error")));
    EXPECT_TRUE(kafka->toolTip().contains(QStringLiteral("last new data")));

    // Receipts / s depends on Kafka alone: "—", stale. The records are PostgreSQL's: shown.
    OverviewView* o = w.overview();
    QLabel* receipts = caption(o, QStringLiteral("Receipts / s"));
    ASSERT_TRUE(receipts);
    EXPECT_TRUE(receipts->text().contains(QStringLiteral("stale")))
        << receipts->text().toStdString();
    QLabel* processing = caption(o, QStringLiteral("Records PROCESSING"));
    ASSERT_TRUE(processing);
    EXPECT_FALSE(processing->text().contains(QStringLiteral("stale")));
    int dashes = 0, seventyOne = 0;
    for (QLabel* l : o->findChildren<QLabel*>()) {
        dashes += l->text() == QStringLiteral("\u2014");
        seventyOne += l->text() == QStringLiteral("71");
    }
    EXPECT_EQ(dashes, 1) << "receipts / s";
    EXPECT_EQ(seventyOne, 1) << "the PROCESSING records, read from PostgreSQL";
    QLabel* critical = caption(o, QStringLiteral("Open critical"));
    ASSERT_TRUE(critical);
    EXPECT_TRUE(critical->text().contains(QStringLiteral("partial")));
    QApplication::processEvents(); // the toolbar lays its labels out again
    w.grab().save(shot("outage-banner.png"));

    // Back up: the banner goes, the figures come back.
    w.takeSnapshot(snapshotAt(T0 + 2000, {sourceIn("postgres", SourceState::Live, T0 - 60'000),
                                          sourceIn("kafka", SourceState::Live, T0 + 1500)}));
    w.flush();
    EXPECT_FALSE(banner->isVisible());
    EXPECT_FALSE(receipts->text().contains(QStringLiteral("stale")));
    EXPECT_FALSE(critical->text().contains(QStringLiteral("partial")));
}

// Quiet is not healthy: a live source that brought nothing for longer than
// quiet_after is amber and says since when.
TEST(MainWindow, AQuietSourceIsAmberWithTheAgeOfItsLastData) {
    MainWindow w(QStringLiteral("quiet"));
    w.resize(1024, 700);
    SourceHealth pg = sourceIn("postgres", SourceState::Quiet, T0 - 180'000);
    pg.lastDataAt = T0 - 185'000;
    w.takeSnapshot(snapshotAt(T0, {pg, sourceIn("kafka", SourceState::Live, T0 - 60'000)}));
    w.flush();
    QLabel* label = nullptr;
    for (QLabel* l : w.findChildren<QLabel*>())
        if (l->text().contains(QStringLiteral("PostgreSQL")) &&
            l->text().contains(QStringLiteral("quiet")))
            label = l;
    ASSERT_TRUE(label);
    EXPECT_TRUE(label->text().contains(QStringLiteral("#e08a1e"))) << "amber";
    EXPECT_TRUE(label->toolTip().contains(QStringLiteral("last new data: 3m 05s ago")))
        << label->toolTip().toStdString();
    EXPECT_TRUE(label->toolTip().contains(QStringLiteral("quiet_after")));
}

// Summaries of waiting anomalies age as they are shown; a relative window
// slides (what left it is neither listed nor counted); the table says how
// many rows of how many it shows.
TEST(AnomalyTable, WaitingSummariesAgeAndRelativeWindowsSlide) {
    AnomalyTableModel model;
    AnomaliesView view(&model);
    Anomaly stuck = anomaly(1, AnomalyKind::StuckProcessing, Severity::Warning, {"c1"}, "api-1");
    stuck.summary = "record PROCESSING (stuck after 5m), lock_version 0";
    stuck.since = T0;
    stuck.evidence = {{"c1", T0, "record PROCESSING"}};
    Anomaly old = anomaly(2, AnomalyKind::KeyRotation, Severity::Critical, {"c2", "c3"}, "api-2");
    old.firstEventAt = T0 - 20 * 60'000;
    old.evidence = {{"c2", T0 - 20 * 60'000, "attempt"}, {"c3", T0 - 18 * 60'000, "attempt"}};
    model.applyChanges({{ChangeKind::Opened, stuck}, {ChangeKind::Opened, old}});
    const auto summaryOf = [&](int row) {
        return model.index(row, AnomalyTableModel::Summary).data().toString();
    };
    model.setNow(T0 + 370'000);
    EXPECT_TRUE(summaryOf(0).endsWith(QStringLiteral("; for 6m 10s since 10:13:20 UTC")))
        << summaryOf(0).toStdString();
    model.setNow(T0 + 18 * 60'000);
    EXPECT_TRUE(summaryOf(0).contains(QStringLiteral("; for 18m 00s")))
        << summaryOf(0).toStdString();

    // "Last 15 min": the key rotation's last evidence is 36 minutes old at
    // T0 + 18 min: out of the window, not listed, not counted. The stuck
    // record still waits now: in every window.
    model.setWindow(15 * 60'000);
    view.filter()->invalidate();
    EXPECT_EQ(view.filter()->rowCount(), 1);
    EXPECT_EQ(model.openCount(AnomalyKind::KeyRotation), 0);
    EXPECT_EQ(model.openCount(AnomalyKind::StuckProcessing), 1);
    model.setWindow(0);
    view.filter()->invalidate();
    EXPECT_EQ(view.filter()->rowCount(), 2);
    EXPECT_EQ(model.openCount(AnomalyKind::KeyRotation), 1);
    view.refreshCounts();
    EXPECT_TRUE(view.counts()->text().startsWith(QStringLiteral("Showing 2 of 2")))
        << view.counts()->text().toStdString();

    // A context menu per row: open, copy, narrow to the kind or an instance.
    QMenu* menu = view.contextMenuFor(view.filter()->index(0, 0));
    QStringList texts;
    for (QAction* a : menu->actions())
        texts << a->text();
    EXPECT_TRUE(texts.contains(QStringLiteral("&Open in the drill-down")));
    EXPECT_TRUE(texts.join(QLatin1Char('|')).contains(QStringLiteral("Only instance")));
    EXPECT_TRUE(texts.join(QLatin1Char('|')).contains(QStringLiteral("Only &kind")));
    delete menu;
}

// Ages move on with every snapshot (20 a second); with 30k rows, filtering and
// sorting every row again on each took most of a frame. Only a row that
// leaves the sliding window is filtered again, and it leaves without an
// invalidate().
namespace {
struct CountingFilter : AnomalyFilterModel {
    mutable int calls = 0;
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        ++calls;
        return AnomalyFilterModel::filterAcceptsRow(row, parent);
    }
};
} // namespace

TEST(AnomalyTable, TheClockMovingFiltersOnlyTheRowsThatLeaveTheWindow) {
    AnomalyTableModel model;
    CountingFilter filter;
    filter.setSourceModel(&model);
    filter.setSortRole(AnomalyTableModel::SortRole);
    filter.sort(AnomalyTableModel::Age, Qt::AscendingOrder);
    std::vector<AnomalyChange> rows;
    for (std::uint64_t id = 1; id <= 2000; ++id) // one a second from T0 + 1 s
        rows.push_back({ChangeKind::Opened,
                        anomaly(id, AnomalyKind::KeyRotation, Severity::Critical, {"c"}, "api-1")});
    model.applyChanges(rows);
    model.setNow(T0 + 2000 * 1000 + 500);
    model.setWindow(30 * 60'000);
    filter.invalidate();
    ASSERT_EQ(filter.rowCount(), 1800); // the last 30 minutes
    ASSERT_EQ(model.openCount(AnomalyKind::KeyRotation), 1800);

    filter.calls = 0;
    QSignalSpy repaint(&model, &AnomalyTableModel::agesMoved);
    model.setNow(T0 + 2000 * 1000 + 800); // ages move, no row leaves
    EXPECT_EQ(filter.calls, 0);
    EXPECT_EQ(repaint.count(), 1); // the table's view repaints: ages read anew
    EXPECT_EQ(filter.rowCount(), 1800);

    model.setNow(T0 + 2005 * 1000 + 500); // five rows leave the window
    EXPECT_LE(filter.calls, 10);
    EXPECT_EQ(filter.rowCount(), 1795);
    EXPECT_EQ(model.openCount(AnomalyKind::KeyRotation), 1795);
}

// One colour per kind, everywhere: thirteen distinct ones, the table's
// decoration and the overview's legend use them, and the legend names every
// kind seen even at 1024×700.
TEST(Overview, EveryKindHasItsOwnColourAndStaysInTheLegend) {
    QSet<QRgb> colours;
    for (std::size_t k = 0; k < 13; ++k)
        colours.insert(kindColor(k).rgb());
    EXPECT_EQ(colours.size(), 13);
    MainWindow w(QStringLiteral("kinds"));
    w.resize(1024, 700);
    w.show();
    std::vector<AnomalyChange> all;
    for (std::size_t k = 0; k < kAnomalyKindNames.size(); ++k)
        all.push_back(
            {ChangeKind::Opened, anomaly(k + 1, static_cast<AnomalyKind>(k), Severity::Warning,
                                         {"c" + std::to_string(k)}, "api-1")});
    auto snap = snapshotAt(T0, {sourceIn("postgres", SourceState::Live, T0 - 60'000),
                                sourceIn("kafka", SourceState::Live, T0 - 60'000)});
    snap->changes = all;
    w.takeSnapshot(snap);
    w.flush();
    const QString legend = w.overview()->anomalyLegend()->text();
    for (const auto name : kAnomalyKindNames)
        EXPECT_TRUE(legend.contains(qs(name))) << name;
    const auto& entries = w.overview()->anomalyLegend()->entries();
    ASSERT_EQ(entries.size(), kAnomalyKindNames.size());
    for (const auto& e : entries)
        EXPECT_EQ(e.count, 1) << e.name.toStdString();
    EXPECT_EQ(entries[3].colour, kindColor(3)) << "key_rotation's colour";
    EXPECT_GT(w.overview()->anomalyLegend()->height(),
              w.overview()->anomalyLegend()->sizeHint().height() - 2)
        << "the legend is not cut at 1024x700";
    const QModelIndex kind = w.anomalyModel()->index(0, AnomalyTableModel::Kind);
    EXPECT_EQ(kind.data(Qt::DecorationRole).value<QColor>(),
              kindColor(static_cast<std::size_t>(w.anomalyModel()->anomaly(0).kind)));
    QApplication::processEvents();
    w.grab().save(shot("overview-1024x700.png"));
}

// The header's arrow points the way the values grow: up when ascending.
TEST(AnomalyTable, SortArrowsMatchTheOrder) {
    EXPECT_EQ(sortArrowFor(Qt::AscendingOrder), int(QStyleOptionHeader::SortUp));
    EXPECT_EQ(sortArrowFor(Qt::DescendingOrder), int(QStyleOptionHeader::SortDown));
    AnomalyTableModel model;
    AnomaliesView view(&model);
    EXPECT_NE(qobject_cast<QProxyStyle*>(view.table()->horizontalHeader()->style()), nullptr);
}

// One clock: UTC by default, or the local zone, named wherever times are shown.
TEST(MainWindow, TimesAreInTheChosenZoneAndTheZoneIsNamed) {
    const QByteArray tz = qgetenv("TZ");
    qputenv("TZ", "America/New_York");
    tzset();
    MainWindow w(QStringLiteral("zone"));
    w.setZone(DisplayZone::Utc);
    EXPECT_EQ(displayDateTime(T0), QStringLiteral("2024-05-20 10:13:20.000"));
    EXPECT_EQ(zoneLabel(T0), QStringLiteral("UTC"));
    w.setZone(DisplayZone::Local);
    EXPECT_EQ(displayDateTime(T0), QStringLiteral("2024-05-20 06:13:20.000"));
    EXPECT_EQ(zoneLabel(T0), QStringLiteral("UTC\u221204:00"));
    EXPECT_EQ(QSettings().value(QStringLiteral("view/zone")).toString(), QStringLiteral("local"));
    // Charts plot so that QtCharts' local labels read in the chosen zone.
    EXPECT_EQ(chartMillis(T0), T0);
    w.setZone(DisplayZone::Utc);
    EXPECT_EQ(QDateTime::fromMSecsSinceEpoch(chartMillis(T0)).toString(QStringLiteral("HH:mm")),
              QStringLiteral("10:13"));
    EXPECT_EQ(fromChartMillis(chartMillis(T0)), T0);
    if (tz.isNull())
        qunsetenv("TZ");
    else
        qputenv("TZ", tz);
    tzset();
}

// Servers and callers on the Instances tab; a double-click jumps to the
// anomalies naming the instance.
TEST(Instances, ServersAndCallersAndAJumpToTheirAnomalies) {
    MainWindow w(QStringLiteral("instances"));
    InstanceStats caller = stats("order-api-1", 10, 2, 1, 0, 1, true, false);
    InstanceStats server = stats("pay-svc-1", 12, 0, 0, 0, 0, false, true);
    w.instances()->setStats({caller, server});
    auto* model = w.instances()->model();
    EXPECT_EQ(model->index(0, InstanceTableModel::Role).data().toString(),
              QStringLiteral("caller"));
    EXPECT_EQ(model->index(1, InstanceTableModel::Role).data().toString(),
              QStringLiteral("server"));
    emit w.instances()->anomaliesRequested(QStringLiteral("pay-svc-1"));
    EXPECT_EQ(w.anomalies()->filter()->instance(), QStringLiteral("pay-svc-1"));
}

// The anomaly and instance tables draw their texts from a cache (issue 12:
// the anomaly table is redrawn 20 times a second). A cell must look as
// QStyledItemDelegate draws it: plain, elided, coloured, selected, aligned,
// beside its decoration; markup in a text is shown as written.
TEST(CachedTextDelegate, DrawsCellsAsTheStyledDelegateDoes) {
    QStandardItemModel model(0, 3);
    const QStringList texts{
        QStringLiteral("duplicate_caller"),
        QStringLiteral("cid-20240520-000001, cid-20240520-000002, cid-20240520-000003, "
                       "cid-20240520-000004 (elided)"),
        QStringLiteral("<b>not bold</b> &amp; <img src=x>"),
        QStringLiteral("order-api-7"),
        QStringLiteral("two\nlines"),
        QStringLiteral("3m 12s")};
    for (int r = 0; r < texts.size(); ++r) {
        QList<QStandardItem*> row;
        for (int c = 0; c < 3; ++c) {
            auto* item = new QStandardItem(texts[(r + c) % texts.size()]);
            if (c == 0)
                item->setData(QColor(0xd6, 0x27, 0x28), Qt::DecorationRole);
            if (c == 1 && r % 2)
                item->setForeground(QColor(0x8a, 0x8f, 0x98));
            if (c == 2)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            row << item;
        }
        model.appendRow(row);
    }
    QTableView view;
    view.setModel(&model);
    view.resize(640, 260);
    view.setColumnWidth(0, 180);
    view.setColumnWidth(1, 260);
    view.setWordWrap(false);
    view.setAlternatingRowColors(true);
    view.setSelectionBehavior(QAbstractItemView::SelectRows);
    view.selectRow(2);
    view.show();
    const QImage styled = view.grab().toImage();
    auto* delegate = new CachedTextDelegate(&view);
    view.setItemDelegate(delegate);
    const QImage cached = view.grab().toImage();
    cached.save(shot("cached-text-delegate.png"));
    styled.save(shot("styled-text-delegate.png"));
    ASSERT_EQ(styled.size(), cached.size());
    int differing = 0;
    for (int y = 0; y < styled.height(); ++y)
        for (int x = 0; x < styled.width(); ++x)
            differing += styled.pixel(x, y) != cached.pixel(x, y);
    EXPECT_EQ(differing, 0) << "of " << styled.width() * styled.height() << " pixels";
    EXPECT_GT(delegate->cachedTexts(), 0);
    // Drawn again, nothing is laid out anew.
    const qsizetype held = delegate->cachedTexts();
    EXPECT_EQ(view.grab().toImage(), cached);
    EXPECT_EQ(delegate->cachedTexts(), held);
}

// Live, calls final and healthy are kept packed: the tracked figure counts
// them, and says how many are.
TEST(MainWindow, TrackedCallsSayHowManyArePacked) {
    MainWindow w(QStringLiteral("packed"));
    w.resize(1024, 700);
    w.show();
    auto snap = snapshotAt(T0, {sourceIn("postgres", SourceState::Live, T0 - 60'000),
                                sourceIn("kafka", SourceState::Live, T0 - 60'000)});
    snap->calls = 2472;
    snap->packedCalls = 2100;
    w.takeSnapshot(snap);
    w.flush();
    QLabel* tracked = nullptr;
    for (QLabel* l : w.overview()->findChildren<QLabel*>())
        if (l->text() == QStringLiteral("2472"))
            tracked = l;
    ASSERT_TRUE(tracked);
    EXPECT_EQ(tracked->toolTip(),
              QStringLiteral("372 held in full, 2100 packed (final and healthy)"));
}
