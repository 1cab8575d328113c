// The drill-down's timeline and navigation (issue 15), offscreen: zoom
// limits and day/year-aware tick labels (plain maths), fit of a lone record's
// whole life, the "now" line, the key to colours and shapes, the context
// menu, back/forward across drill-downs, and a title row that never clips.
// main() with the QApplication is in views_test.cpp.
#include "models/call_store.h"
#include "views/clock.h"
#include "views/drilldown_view.h"
#include "views/palette.h"
#include "views/timeline_painter.h"
#include "views/timeline_widget.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>
#include <QTextBrowser>
#include <QTimeZone>
#include <QToolButton>

#include <gtest/gtest.h>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000; // 2024-05-20 10:13:20 UTC

QString shot(const char* name) {
    QString dir = qEnvironmentVariable("CALLSCOPE_SCREENSHOTS");
    if (dir.isEmpty())
        dir = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots");
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + QLatin1String(name);
}

EpochMillis utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0, int ms = 0) {
    return QDateTime(QDate(y, mo, d), QTime(h, mi, s, ms), QTimeZone::utc()).toMSecsSinceEpoch();
}

// Tests set the zone they read in; they leave UTC behind (the default).
struct UtcZone {
    UtcZone() { setDisplayZone(DisplayZone::Utc); }
    ~UtcZone() { setDisplayZone(DisplayZone::Utc); }
};

const std::string kDigest(64, 'a');

// One record, PROCESSING since T0, nothing else: looked at `age` ms later.
CallTimeline loneProcessingRecord(EpochMillis age) {
    CallStore s;
    s.add(RecordObservation{"lone", kDigest, RecordStatus::Processing, "api-1", 0, T0, T0,
                            T0 + 86'400'000});
    return buildTimeline(s, 0, T0 + age);
}

// A finished call (as views_test's scriptedTimeline): caller confirmed,
// record SUCCESS, one attempt, one receipt.
CallTimeline finishedCall(const std::string& callId = "c1") {
    CallStore s;
    CallerObservation e{callId, CallerState::Initiated, T0, "api-1", 0, "B1", kDigest, "t", {}};
    s.add(e);
    e.state = CallerState::AwaitingResponse;
    e.at = T0 + 1;
    e.attempt = 1;
    s.add(e);
    s.add(RecordObservation{callId, kDigest, RecordStatus::Processing, "api-1", 0, T0 + 2, T0 + 2,
                            T0 + 86'400'000});
    AttemptObservation a;
    a.callId = callId;
    a.digest = kDigest;
    a.sourceInstance = "api-1";
    a.arrivedAt = T0 + 2;
    a.finishedAt = T0 + 400;
    s.add(a);
    s.add(RecordObservation{callId, kDigest, RecordStatus::Success, "api-1", 0, T0 + 2, T0 + 400,
                            T0 + 86'400'000});
    ReceiptObservation r;
    r.callId = callId;
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

// A call still under way a minute later: the caller awaits the response, the
// record is PROCESSING, the attempt has not finished.
CallTimeline openCall() {
    CallStore s;
    CallerObservation e{"c-open", CallerState::Initiated, T0, "api-1", 0, "B7", kDigest, "t", {}};
    s.add(e);
    e.state = CallerState::AwaitingResponse;
    e.at = T0 + 5;
    e.attempt = 1;
    s.add(e);
    s.add(RecordObservation{"c-open", kDigest, RecordStatus::Processing, "api-1", 0, T0 + 8, T0 + 8,
                            T0 + 86'400'000});
    AttemptObservation a;
    a.callId = "c-open";
    a.digest = kDigest;
    a.sourceInstance = "api-1";
    a.outcome = AttemptOutcome::InProgress;
    a.arrivedAt = T0 + 8;
    s.add(a);
    return buildTimeline(s, 0, T0 + 60'000);
}

CallDetail found(DrilldownView& v, CallTimeline t) {
    CallDetail d;
    d.found = true;
    d.generation = v.generation();
    d.timeline = std::move(t);
    return d;
}

// Answers the view's pending lookup with the call `callId`.
void answer(DrilldownView& v, const std::string& callId) {
    v.showDetail(found(v, finishedCall(callId)));
}

QStringList actionTexts(const QMenu& menu) {
    QStringList texts;
    for (const QAction* a : menu.actions())
        if (!a->isSeparator())
            texts << a->text();
    return texts;
}

// The action named `text`; a test fails (without crashing) when there is none.
QAction* action(const QMenu& menu, const QString& text) {
    for (QAction* a : menu.actions())
        if (a->text() == text)
            return a;
    ADD_FAILURE() << "no action " << text.toStdString();
    return new QAction(qApp); // a stand-in, freed with the application
}

} // namespace

// --- Axis maths --------------------------------------------------------------

TEST(TimelineAxis, ZoomStopsBetweenTheSmallestSpanAndAFewTimesTheLife) {
    TimeAxis a{0, 1000, 1000};
    a.fitLife(0, 60'000);
    EXPECT_EQ(a.maxSpan, TimeAxis::maxSpanFor(60'000));
    EXPECT_EQ(a.maxSpan, 4 * 60'000 + 60'000);
    for (int i = 0; i < 200; ++i)
        a.zoom(1 / 1.5, 500);
    EXPECT_LE(a.to - a.from, a.maxSpan + 1);
    EXPECT_GE(a.to - a.from, a.maxSpan - 1);
    for (int i = 0; i < 200; ++i)
        a.zoom(1.5, 500);
    EXPECT_EQ(a.to - a.from, TimeAxis::kMinSpan);

    // However long the life, never more than ~400 days...
    EXPECT_EQ(TimeAxis::maxSpanFor(10LL * 365 * kMillisPerDay), TimeAxis::kMaxSpan);
    EXPECT_LE(TimeAxis::kMaxSpan, 400 * kMillisPerDay);
    TimeAxis b{0, 1000, 1000};
    for (int i = 0; i < 400; ++i)
        b.zoom(1 / 1.5, 500);
    EXPECT_LE(b.to - b.from, TimeAxis::kMaxSpan + 1);
    // ...and a view already wider than the limit does not grow.
    TimeAxis c{0, 500 * kMillisPerDay, 1000, TimeAxis::kMaxSpan};
    c.zoom(1 / 1.5, 500);
    EXPECT_LE(c.to - c.from, 500 * kMillisPerDay + 1);
}

TEST(TimelineAxis, ALoneInstantFitsAFewSecondsAroundIt) {
    TimeAxis a{0, 1000, 1000};
    a.fitLife(T0, T0);
    EXPECT_EQ(a.from, T0 - TimeAxis::kLoneSpan / 2);
    EXPECT_EQ(a.to, T0 + TimeAxis::kLoneSpan / 2);
    EXPECT_GE(a.to - a.from, 2000);
    EXPECT_GE(a.maxSpan, a.to - a.from);
}

TEST(TimelineAxis, TickFormatFollowsTheStepAndNamesTheDayAndYearWhenCrossed) {
    using D = TickFormat::Date;
    using Tm = TickFormat::Time;
    const EpochMillis noon = utc(2026, 12, 3, 12);
    EXPECT_EQ(tickFormat(noon, noon + 5000, 500), (TickFormat{D::None, Tm::Millis}));
    EXPECT_EQ(tickFormat(noon, noon + 60'000, 5000), (TickFormat{D::None, Tm::Seconds}));
    EXPECT_EQ(tickFormat(noon, noon + 3'600'000, 600'000), (TickFormat{D::None, Tm::Minutes}));
    // Across midnight: the day; across New Year: the year too.
    const EpochMillis midnight = utc(2026, 12, 4);
    EXPECT_EQ(tickFormat(midnight - 3'600'000, midnight + 3'600'000, 600'000),
              (TickFormat{D::MonthDay, Tm::Minutes}));
    EXPECT_EQ(tickFormat(midnight - 10'000, midnight + 10'000, 2000),
              (TickFormat{D::MonthDay, Tm::Seconds}));
    const EpochMillis newYear = utc(2027, 1, 1);
    EXPECT_EQ(tickFormat(newYear - 3'600'000, newYear + 3'600'000, 600'000),
              (TickFormat{D::YearMonthDay, Tm::Minutes}));
    // Day steps show dates only; with the year when the range spans two.
    EXPECT_EQ(tickFormat(utc(2026, 3, 1), utc(2026, 6, 1), kMillisPerDay),
              (TickFormat{D::MonthDay, Tm::None}));
    EXPECT_EQ(tickFormat(utc(2026, 3, 1), utc(2027, 3, 1), 30 * kMillisPerDay),
              (TickFormat{D::YearMonthDay, Tm::None}));
    // The day is the display zone's: 21:00-22:30 UTC crosses midnight at UTC+02:00.
    const EpochMillis late = utc(2026, 12, 3, 21);
    EXPECT_EQ(tickFormat(late, late + 5'400'000, 600'000).date, D::None);
    EXPECT_EQ(tickFormat(late, late + 5'400'000, 600'000, 2 * 3'600'000).date, D::MonthDay);
    EXPECT_EQ(civilFromDays(dayOf(utc(2024, 2, 29, 23, 59))).day, 29);
    EXPECT_EQ(civilFromDays(dayOf(utc(1969, 12, 31, 12))).year, 1969);
}

TEST(TimelineAxis, TicksNeverCrowdAndFallOnTheZoneClock) {
    const auto width = [](const TickFormat& f) {
        // About as wide as the painter's labels: 7 px a character.
        double chars = 0;
        chars += f.date == TickFormat::Date::YearMonthDay ? 11
                 : f.date == TickFormat::Date::MonthDay   ? 6
                                                          : 0;
        chars += f.time == TickFormat::Time::Millis    ? 12
                 : f.time == TickFormat::Time::Seconds ? 8
                 : f.time == TickFormat::Time::Minutes ? 5
                                                       : 0;
        return chars * 7;
    };
    for (const EpochMillis span : {EpochMillis{10}, EpochMillis{420}, EpochMillis{9000},
                                   EpochMillis{3'600'000}, 3 * kMillisPerDay, TimeAxis::kMaxSpan}) {
        const TimeAxis a{T0 + 123, T0 + 123 + span, 880};
        for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{-5 * 3'600'000}}) {
            const TickPlan plan = planTicks(a, offset, width);
            ASSERT_GT(plan.step, 0);
            const double labels = double(span) / double(plan.step);
            EXPECT_LE(labels * (width(plan.format) + 16), a.width + width(plan.format) + 16)
                << span;
            EXPECT_GE(plan.first, a.from);
            EXPECT_LT(plan.first - a.from, plan.step + 1);
            EXPECT_EQ((plan.first + offset) % plan.step, 0) << span << " " << offset;
        }
    }
    // Across a whole 400-day view every label carries its date and year.
    const TimeAxis wide{utc(2026, 6, 1), utc(2026, 6, 1) + TimeAxis::kMaxSpan, 880};
    EXPECT_EQ(planTicks(wide, 0, width).format.date, TickFormat::Date::YearMonthDay);
}

TEST(TimelineAxis, TickLabelsReadInTheDisplayZone) {
    UtcZone zone;
    const EpochMillis t = utc(2026, 12, 3, 22, 52, 24, 771);
    using D = TickFormat::Date;
    using Tm = TickFormat::Time;
    EXPECT_EQ(tickLabel(t, {D::None, Tm::Millis}), QStringLiteral("22:52:24.771"));
    EXPECT_EQ(tickLabel(t, {D::None, Tm::Seconds}), QStringLiteral("22:52:24"));
    EXPECT_EQ(tickLabel(t, {D::MonthDay, Tm::Minutes}), QStringLiteral("12-03 22:52"));
    EXPECT_EQ(tickLabel(t, {D::YearMonthDay, Tm::None}), QStringLiteral("2026-12-03"));
    EXPECT_EQ(tickLabel(t, {D::YearMonthDay, Tm::Minutes}), QStringLiteral("2026-12-03 22:52"));
    EXPECT_EQ(displayOffsetMs(t), 0);
    setDisplayZone(DisplayZone::Local);
    EXPECT_EQ(
        tickLabel(t, {D::YearMonthDay, Tm::Millis}),
        QDateTime::fromMSecsSinceEpoch(t).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")));
}

// --- The widget --------------------------------------------------------------

TEST(TimelineWidget, FitShowsALoneProcessingRecordFromCreationToNow) {
    TimelineWidget w;
    w.resize(1000, 320);
    w.setTimeline(loneProcessingRecord(90'000), {});
    const EpochMillis span = w.axis().to - w.axis().from;
    EXPECT_LE(w.axis().from, T0);
    EXPECT_GE(w.axis().to, T0 + 90'000);
    EXPECT_LT(span, 2 * 90'000);
    // Zoomed in and fitted again (key 0): the same whole life.
    QTest::keyClick(&w, Qt::Key_Plus);
    QTest::keyClick(&w, Qt::Key_Plus);
    EXPECT_LT(w.axis().to - w.axis().from, span);
    QTest::keyClick(&w, Qt::Key_0);
    EXPECT_EQ(w.axis().to - w.axis().from, span);
    // Looked at the moment it was created: a few seconds around it, not 4 ms.
    w.setTimeline(loneProcessingRecord(0), {});
    EXPECT_GE(w.axis().to - w.axis().from, 2000);
    EXPECT_TRUE(w.axis().visible(T0));
}

TEST(TimelineWidget, ZoomOutStopsAtAFewTimesTheCallsLife) {
    TimelineWidget w;
    w.resize(1000, 320);
    w.setTimeline(finishedCall(), {});
    for (int i = 0; i < 100; ++i)
        QTest::keyClick(&w, Qt::Key_Minus);
    EXPECT_LE(w.axis().to - w.axis().from, TimeAxis::maxSpanFor(420) + 1);
    EXPECT_LT(w.axis().to - w.axis().from, 5 * 60'000);
}

TEST(TimelineWidget, DrawsANowLineOnOpenCallsOnly) {
    UtcZone zone;
    TimelineWidget w;
    w.resize(1000, 320);
    w.setTimeline(finishedCall(), {});
    EXPECT_EQ(w.now(), kNoTime);
    EXPECT_LT(w.nowX(), 0);

    w.setTimeline(openCall(), {});
    EXPECT_EQ(w.now(), T0 + 60'000);
    const double x = w.nowX();
    ASSERT_GT(x, 0);
    const TimelineLayout l = TimelineLayout::forRect(QRectF(w.rect()));
    EXPECT_NEAR(x, l.serverLane.left() + w.axis().x(T0 + 60'000), 0.5);
    EXPECT_LT(x, l.serverLane.right());
    const QImage img = w.grab().toImage();
    img.save(shot("timeline-now.png"));
    // The dashed line crosses the empty attempt lane at now.
    const QColor base = w.palette().color(QPalette::Base);
    int marked = 0;
    for (int y = int(l.attemptLane.top()); y < int(l.attemptLane.bottom()); ++y) {
        bool any = false;
        for (int dx = -1; dx <= 1; ++dx)
            any = any || img.pixelColor(int(x) + dx, y) != base;
        marked += any ? 1 : 0;
    }
    EXPECT_GE(marked, 10);
    // Also a lone PROCESSING record is open.
    w.setTimeline(loneProcessingRecord(90'000), {});
    EXPECT_GT(w.nowX(), 0);
}

TEST(TimelineWidget, KeyShowsTheBandColoursAndFitsAt1024) {
    TimelineWidget w;
    w.resize(1024, 400);
    const CallTimeline t = openCall();
    w.setTimeline(t, {});
    const TimelineLayout l = TimelineLayout::forRect(QRectF(w.rect()));
    const double keyHeight = timelineKeyHeight(t, {}, w.now(), w.font(), 1024);
    EXPECT_GT(keyHeight, 10);
    EXPECT_LE(keyHeight, 100); // a few rows, not a wall
    EXPECT_GE(w.minimumSizeHint().height(), int(l.keyArea.top() + keyHeight));
    const QImage img = w.grab().toImage();
    img.save(shot("timeline-key.png"));
    // Every band state of this call has its swatch in the key.
    for (const StateBand& b : t.bands) {
        bool seen = false;
        for (int y = int(l.keyArea.top()); y < img.height() && !seen; ++y)
            for (int x = 0; x < img.width() && !seen; ++x)
                seen = img.pixelColor(x, y) == stateColor(b.state);
        EXPECT_TRUE(seen) << b.state;
    }
}

TEST(TimelineWidget, ContextMenuCopiesTheCallTheTimeAndTheEvent) {
    UtcZone zone;
    TimelineWidget w;
    w.resize(1000, 320);
    const CallTimeline t = finishedCall();
    w.setTimeline(t, {});
    const TimelineLayout l = TimelineLayout::forRect(QRectF(w.rect()));

    // Over the attempt marker.
    const QPoint atAttempt(int(std::lround(l.serverLane.left() + w.axis().x(T0 + 2))),
                           int(l.attemptLane.center().y()));
    const auto menu = w.contextMenuAt(atAttempt);
    EXPECT_EQ(actionTexts(*menu),
              (QStringList{QStringLiteral("Copy callId"), QStringLiteral("Copy time here"),
                           QStringLiteral("Copy event"), QStringLiteral("Fit")}));
    action(*menu, QStringLiteral("Copy callId"))->trigger();
    EXPECT_EQ(QApplication::clipboard()->text(), QStringLiteral("c1"));
    action(*menu, QStringLiteral("Copy event"))->trigger();
    const QString event = QApplication::clipboard()->text();
    EXPECT_TRUE(event.startsWith(displayDateTime(T0 + 2) + QStringLiteral(" UTC\n")))
        << event.toStdString();
    EXPECT_FALSE(event.contains(QLatin1Char('<'))) << "plain text, not the tooltip's markup";
    EXPECT_EQ(event, w.entryText(w.entryAt(atAttempt), false));
    action(*menu, QStringLiteral("Copy time here"))->trigger();
    EXPECT_EQ(QApplication::clipboard()->text(),
              displayDateTime(w.axis().time(atAttempt.x() - l.serverLane.left())) +
                  QStringLiteral(" UTC"));

    // Over an empty stretch: no event to copy; Fit undoes a zoom.
    const QPoint empty(int(l.serverLane.right() - 5), int(l.receiptLane.bottom() - 2));
    const auto plain = w.contextMenuAt(empty);
    EXPECT_EQ(actionTexts(*plain),
              (QStringList{QStringLiteral("Copy callId"), QStringLiteral("Copy time here"),
                           QStringLiteral("Fit")}));
    const EpochMillis span = w.axis().to - w.axis().from;
    QTest::keyClick(&w, Qt::Key_Plus);
    ASSERT_NE(w.axis().to - w.axis().from, span);
    action(*plain, QStringLiteral("Fit"))->trigger();
    EXPECT_EQ(w.axis().to - w.axis().from, span);
    EXPECT_EQ(action(*plain, QStringLiteral("Fit"))->shortcut(), QKeySequence(Qt::Key_0));

    // In the label column there is no time to copy.
    const auto left = w.contextMenuAt(QPoint(20, int(l.serverLane.center().y())));
    EXPECT_FALSE(action(*left, QStringLiteral("Copy time here"))->isEnabled());
}

TEST(TimelineWidget, TooltipTimesReadInTheDisplayZone) {
    UtcZone zone;
    TimelineWidget w;
    w.resize(1000, 320);
    w.setTimeline(finishedCall(), {});
    int attempt = -1;
    for (std::size_t k = 0; k < w.timeline().entries.size(); ++k)
        if (w.timeline().entries[k].lane == Lane::Attempt)
            attempt = int(k);
    ASSERT_GE(attempt, 0);
    const QString tip = w.entryText(attempt, true);
    EXPECT_TRUE(tip.contains(displayDateTime(T0 + 2) + QStringLiteral(" UTC")))
        << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("finished ") + displayDateTime(T0 + 400)));
}

// --- The drill-down ----------------------------------------------------------

TEST(DrilldownHistory, BackAndForwardWalkTheCallsShown) {
    DrilldownView v;
    QSignalSpy asked(&v, &DrilldownView::callRequested);
    QSignalSpy changed(&v, &DrilldownView::historyChanged);
    EXPECT_FALSE(v.canGoBack());
    EXPECT_FALSE(v.canGoForward());
    EXPECT_FALSE(v.backButton()->isEnabled());

    v.lookup(QStringLiteral("A"));
    answer(v, "A");
    EXPECT_FALSE(v.canGoBack());
    v.lookup(QStringLiteral("B"));
    answer(v, "B");
    EXPECT_EQ(v.history(), (QStringList{QStringLiteral("A"), QStringLiteral("B")}));
    EXPECT_TRUE(v.canGoBack());
    EXPECT_FALSE(v.canGoForward());
    EXPECT_TRUE(v.backButton()->isEnabled());
    EXPECT_FALSE(v.forwardButton()->isEnabled());
    EXPECT_TRUE(v.backButton()->toolTip().contains(QStringLiteral("A")));
    EXPECT_GE(changed.count(), 2);

    asked.clear();
    v.back();
    ASSERT_EQ(asked.count(), 1);
    EXPECT_EQ(asked.at(0).at(0).toString(), QStringLiteral("A"));
    EXPECT_FALSE(v.canGoBack());
    EXPECT_TRUE(v.canGoForward());
    answer(v, "A"); // found again: not a new step
    EXPECT_EQ(v.history().size(), 2);
    EXPECT_EQ(v.historyIndex(), 0);
    EXPECT_EQ(v.currentCallId(), QStringLiteral("A"));

    v.forward();
    ASSERT_EQ(asked.count(), 2);
    EXPECT_EQ(asked.at(1).at(0).toString(), QStringLiteral("B"));
    answer(v, "B");
    EXPECT_EQ(v.history().size(), 2);
    EXPECT_TRUE(v.canGoBack());
    EXPECT_FALSE(v.canGoForward());
    v.forward(); // nothing ahead: nothing asked
    EXPECT_EQ(asked.count(), 2);

    // Going somewhere new from the middle drops what was ahead.
    v.back();
    answer(v, "A");
    v.lookup(QStringLiteral("C"));
    answer(v, "C");
    EXPECT_EQ(v.history(), (QStringList{QStringLiteral("A"), QStringLiteral("C")}));
    EXPECT_FALSE(v.canGoForward());
    // A lookup that finds nothing is not a step; nor is the same call again.
    v.lookup(QStringLiteral("missing"));
    CallDetail none;
    none.generation = v.generation();
    v.showDetail(none);
    v.lookup(QStringLiteral("C"));
    answer(v, "C");
    EXPECT_EQ(v.history().size(), 2);
    // A bizNo lookup remembers the callId it found.
    v.lookup(QStringLiteral("B1"));
    answer(v, "D");
    EXPECT_EQ(v.history().back(), QStringLiteral("D"));
}

TEST(DrilldownHistory, AltArrowsAndTheMouseButtonsGoBackAndForward) {
    DrilldownView v;
    v.resize(1024, 700);
    v.show();
    v.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&v));
    v.lookup(QStringLiteral("A"));
    answer(v, "A");
    v.lookup(QStringLiteral("B"));
    answer(v, "B");
    QSignalSpy asked(&v, &DrilldownView::callRequested);

    v.timeline()->setFocus();
    QTest::keyClick(v.timeline(), Qt::Key_Left, Qt::AltModifier);
    ASSERT_EQ(asked.count(), 1);
    EXPECT_EQ(asked.at(0).at(0).toString(), QStringLiteral("A"));
    answer(v, "A");
    EXPECT_EQ(v.timeline()->axis().from, T0 - 21); // fitted anew, not panned
    QTest::keyClick(v.timeline(), Qt::Key_Right, Qt::AltModifier);
    ASSERT_EQ(asked.count(), 2);
    EXPECT_EQ(asked.at(1).at(0).toString(), QStringLiteral("B"));
    answer(v, "B");
    // From the details too.
    v.details()->setFocus();
    QTest::keyClick(v.details(), Qt::Key_Left, Qt::AltModifier);
    ASSERT_EQ(asked.count(), 3);
    EXPECT_EQ(asked.at(2).at(0).toString(), QStringLiteral("A"));
    answer(v, "A");

    // The mouse's forward and back buttons, over the timeline and the details.
    QTest::mouseClick(v.timeline(), Qt::ForwardButton, {}, QPoint(300, 60));
    ASSERT_EQ(asked.count(), 4);
    EXPECT_EQ(asked.at(3).at(0).toString(), QStringLiteral("B"));
    answer(v, "B");
    QTest::mouseClick(v.details()->viewport(), Qt::BackButton, {}, QPoint(40, 40));
    ASSERT_EQ(asked.count(), 5);
    EXPECT_EQ(asked.at(4).at(0).toString(), QStringLiteral("A"));
    answer(v, "A");
    QTest::mouseClick(&v, Qt::ForwardButton, {}, QPoint(5, 5));
    ASSERT_EQ(asked.count(), 6);
    EXPECT_EQ(asked.at(5).at(0).toString(), QStringLiteral("B"));

    // Plain Left still pans the timeline.
    answer(v, "B");
    const EpochMillis before = v.timeline()->axis().from;
    v.timeline()->setFocus();
    QTest::keyClick(v.timeline(), Qt::Key_Left);
    EXPECT_LT(v.timeline()->axis().from, before);
    EXPECT_EQ(asked.count(), 6);
}

TEST(DrilldownTitle, EvidenceChoiceIsNeverClippedAndALongTitleElides) {
    DrilldownView v;
    v.resize(1024, 700);
    v.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&v));
    v.lookup(QStringLiteral("c-open"));
    CallDetail d = found(v, openCall());
    Anomaly a;
    a.kind = AnomalyKind::KeyRotation;
    a.severity = Severity::Critical;
    a.callIds = {"c-open"};
    a.summary = "key rotated";
    d.anomalies = {a};
    a.kind = AnomalyKind::StuckProcessing;
    a.severity = Severity::Warning;
    d.anomalies.push_back(a);
    v.showDetail(d);
    QCoreApplication::processEvents();
    QComboBox* box = v.evidenceChoice();
    const QFontMetrics fm(box->font());
    for (int i = 0; i < box->count(); ++i)
        EXPECT_GE(box->width(), fm.horizontalAdvance(box->itemText(i)) + 16)
            << box->itemText(i).toStdString();
    EXPECT_EQ(v.title()->text(), QStringLiteral("c-open   bizNo B7"));
    v.grab().save(shot("drilldown-key-now.png"));

    // A callId too long for the row: elided, whole in the tooltip, the box intact.
    const std::string longId = "c-" + std::string(300, 'x');
    v.lookup(QString::fromStdString(longId));
    CallTimeline t = openCall();
    t.callId = longId;
    v.showDetail(found(v, t));
    QCoreApplication::processEvents();
    EXPECT_NE(v.title()->text(), QString::fromStdString(longId));
    EXPECT_TRUE(v.title()->text().endsWith(QChar(0x2026)));
    EXPECT_LE(v.title()->fontMetrics().horizontalAdvance(v.title()->text()), v.title()->width());
    EXPECT_TRUE(v.title()->toolTip().contains(QString::fromStdString(longId)));
    EXPECT_GE(box->width(), fm.horizontalAdvance(box->itemText(0)) + 16);
    EXPECT_LE(v.width(), 1024);
}
