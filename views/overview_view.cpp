#include "views/overview_view.h"

#include "views/clock.h"
#include "views/palette.h"
#include "views/theme.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPainter>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace callscope {
namespace {

constexpr std::size_t kHistory = 600; // points: ten minutes at one a second

QChartView* viewOf(QChart* chart, QWidget* parent) {
    auto* v = new QChartView(chart, parent);
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumHeight(220);
    return v;
}

// A whole, round tick step giving about five ticks up to `top`.
double niceStep(double top) {
    const double raw = std::max(1.0, top / 5);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * magnitude)
            return m * magnitude;
    return 10 * magnitude;
}

// Charts follow the application's palette: dark charts on a dark theme.
void themeChart(QChart* c) {
    c->setTheme(isDarkPalette() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->setBackgroundRoundness(0);
}

void styleChart(QChart* c, const QString& title) {
    themeChart(c);
    c->setTitle(title);
    c->setMargins(QMargins(4, 4, 4, 4));
    c->legend()->setAlignment(Qt::AlignBottom);
    c->setAnimationOptions(QChart::NoAnimation);
}

} // namespace

QWidget* OverviewView::tile(const QString& title, QLabel** value) {
    auto* frame = new QFrame(this);
    frame->setFrameShape(QFrame::StyledPanel);
    auto* l = new QVBoxLayout(frame);
    auto* t = new QLabel(title, frame);
    *value = new QLabel(QStringLiteral("\u2014"), frame);
    m_captions[*value] = t;
    QFont f = (*value)->font();
    f.setPointSizeF(f.pointSizeF() * 1.8);
    f.setBold(true);
    (*value)->setFont(f);
    l->addWidget(t);
    l->addWidget(*value);
    return frame;
}

OverviewView::OverviewView(QWidget* parent) : QWidget(parent) {
    auto* tiles = new QGridLayout;
    const auto add = [&](int r, int c, const QString& title, QLabel** v, const QString& tip) {
        QWidget* t = tile(title, v);
        t->setToolTip(tip); // the whole tile explains its figure
        tiles->addWidget(t, r, c);
    };
    add(0, 0, tr("Records PROCESSING"), &m_processing,
        tr("Idempotency records in the window whose status is PROCESSING now"));
    add(0, 1, tr("Records SUCCESS"), &m_success,
        tr("Idempotency records in the window whose status is SUCCESS now"));
    add(0, 2, tr("Records FAILED"), &m_failed,
        tr("Idempotency records in the window whose status is FAILED now"));
    add(0, 3, tr("Receipts / s"), &m_receipts,
        tr("Receipts read from the receipt topics per second, over the last seconds"));
    add(0, 4, tr("Attempts / s"), &m_attempts,
        tr("Server attempt rows (requests that reached a server) per second"));
    add(1, 0, tr("Open critical"), &m_critical,
        tr("Open critical anomalies: double executions, state mismatches, concurrent runs"));
    add(1, 1, tr("Open warning"), &m_warning, tr("Open anomalies of severity warning"));
    add(1, 2, tr("Open info"), &m_info, tr("Open anomalies of severity info (orphan receipts)"));
    add(1, 3, tr("CallIds tracked"), &m_calls,
        tr("CallIds held in memory: the window plus live traffic, less what retention evicted. "
           "A call final and healthy is kept packed (about 100 bytes) until retention passes "
           "it; a search brings it back whole"));
    add(1, 4, tr("Rejected messages"), &m_rejected,
        tr("Malformed messages and rows, counted and skipped; hover the number for samples"));
    m_critical->setStyleSheet(QStringLiteral("color: %1").arg(severityColor("critical").name()));
    m_warning->setStyleSheet(QStringLiteral("color: %1").arg(severityColor("warning").name()));

    m_throughputChart = new QChart;
    styleChart(m_throughputChart, tr("Throughput (per second)"));
    const char* names[4] = {"receipts", "attempts", "caller events", "record changes"};
    m_throughputX = new QDateTimeAxis;
    m_throughputX->setFormat(QStringLiteral("HH:mm:ss"));
    m_throughputX->setTickCount(5);
    m_throughputY = new QValueAxis;
    m_throughputY->setLabelFormat(QStringLiteral("%.0f"));
    m_throughputChart->addAxis(m_throughputX, Qt::AlignBottom);
    m_throughputChart->addAxis(m_throughputY, Qt::AlignLeft);
    for (int k = 0; k < 4; ++k) {
        m_throughput[k] = new QLineSeries;
        m_throughput[k]->setName(QString::fromUtf8(names[k]));
        m_throughputChart->addSeries(m_throughput[k]);
        m_throughput[k]->attachAxis(m_throughputX);
        m_throughput[k]->attachAxis(m_throughputY);
    }

    auto* ageChart = m_ageChart = new QChart;
    styleChart(ageChart, tr("PROCESSING records by age"));
    m_ages = new QBarSet(tr("records"));
    for (std::size_t i = 0; i < kAgeBucketNames.size(); ++i)
        *m_ages << 0;
    m_ages->setColor(stateColor("PROCESSING"));
    auto* bars = new QBarSeries;
    bars->append(m_ages);
    ageChart->addSeries(bars);
    auto* cats = new QBarCategoryAxis;
    for (const char* n : kAgeBucketNames)
        cats->append(QString::fromUtf8(n));
    QFont small = cats->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.78); // eight buckets fit at 1024 px
    cats->setLabelsFont(small);
    m_agesY = new QValueAxis;
    m_agesY->setLabelFormat(QStringLiteral("%.0f"));
    ageChart->addAxis(cats, Qt::AlignBottom);
    ageChart->addAxis(m_agesY, Qt::AlignLeft);
    bars->attachAxis(cats);
    bars->attachAxis(m_agesY);
    ageChart->legend()->hide();

    m_anomalyChart = new QChart;
    styleChart(m_anomalyChart, tr("Open anomalies by kind"));
    // The legend is a widget of its own: QtCharts drops entries that do not
    // fit, and every kind seen must stay named with its colour and count.
    m_anomalyChart->legend()->hide();
    m_anomalyLegend = new KindLegend(this);
    m_anomalyLegend->setObjectName(QStringLiteral("anomalyLegend"));
    // Never narrower than its names: the chart gives way instead.
    m_anomalyLegend->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Preferred);
    m_anomalyX = new QDateTimeAxis;
    m_anomalyX->setFormat(QStringLiteral("HH:mm:ss"));
    m_anomalyX->setTickCount(4);
    m_anomalyY = new QValueAxis;
    m_anomalyY->setLabelFormat(QStringLiteral("%.0f"));
    m_anomalyChart->addAxis(m_anomalyX, Qt::AlignBottom);
    m_anomalyChart->addAxis(m_anomalyY, Qt::AlignLeft);

    auto* charts = new QGridLayout;
    charts->addWidget(viewOf(m_throughputChart, this), 0, 0, 1, 2);
    charts->addWidget(viewOf(ageChart, this), 1, 0);
    auto* anomalies = new QHBoxLayout;
    anomalies->setSpacing(2);
    anomalies->addWidget(viewOf(m_anomalyChart, this), 1);
    anomalies->addWidget(m_anomalyLegend);
    charts->addLayout(anomalies, 1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(tiles);
    layout->addLayout(charts, 1);
}

KindLegend::KindLegend(QWidget* parent) : QWidget(parent) {
    m_hint = measure();
}

void KindLegend::setEntries(std::vector<Entry> entries) {
    const bool same =
        entries.size() == m_entries.size() &&
        std::equal(entries.begin(), entries.end(), m_entries.begin(),
                   [](const Entry& a, const Entry& b) {
                       return a.name == b.name && a.count == b.count && a.colour == b.colour;
                   });
    if (same)
        return;
    m_entries = std::move(entries);
    setToolTip(text());
    // A layout only when the size changes (a kind seen first, a count's
    // digits); a count alone repaints.
    if (const QSize hint = measure(); hint != m_hint) {
        m_hint = hint;
        updateGeometry();
    }
    update();
}

QString KindLegend::text() const {
    if (m_entries.empty())
        return tr("no anomalies yet");
    QStringList lines;
    for (const Entry& e : m_entries)
        lines << e.name + QLatin1Char(' ') + QString::number(e.count);
    return lines.join(QLatin1Char('\n'));
}

QSize KindLegend::sizeHint() const {
    return m_hint;
}

// Rows of: a square in the kind's colour, its name, its count (right).
QSize KindLegend::measure() const {
    const QFontMetrics fm(font());
    if (m_entries.empty())
        return {fm.horizontalAdvance(text()) + 4, fm.height() + 2};
    int names = 0, counts = 0;
    for (const Entry& e : m_entries) {
        names = std::max(names, fm.horizontalAdvance(e.name));
        counts = std::max(counts, fm.horizontalAdvance(QString::number(e.count)));
    }
    const int gap = fm.horizontalAdvance(QLatin1Char(' '));
    return {fm.ascent() + gap + names + 2 * gap + counts + 2,
            static_cast<int>(m_entries.size()) * (fm.height() + 1) + 2};
}

void KindLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QFontMetrics fm(font());
    p.setPen(palette().color(QPalette::WindowText));
    if (m_entries.empty()) {
        p.drawText(QPoint(2, 1 + fm.ascent()), text());
        return;
    }
    const int gap = fm.horizontalAdvance(QLatin1Char(' '));
    const int square = std::max(4, fm.ascent() * 2 / 3);
    int y = 1;
    for (const Entry& e : m_entries) {
        p.fillRect(QRect(1, y + fm.ascent() - square, square, square), e.colour);
        p.drawText(QPoint(1 + fm.ascent() + gap, y + fm.ascent()), e.name);
        const QString count = QString::number(e.count);
        p.drawText(QPoint(width() - 2 - fm.horizontalAdvance(count), y + fm.ascent()), count);
        y += fm.height() + 1;
    }
}

void KindLegend::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        m_hint = measure();
        updateGeometry();
    }
}

void OverviewView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange)
        return;
    for (QChart* c : {m_throughputChart, m_ageChart, m_anomalyChart})
        themeChart(c); // (a theme sets its own series colours: ours go back on)
    m_ages->setColor(stateColor("PROCESSING"));
    for (const auto& [kind, series] : m_anomalySeries)
        series->setColor(kindColor(static_cast<std::size_t>(kind)));
    for (QAbstractAxis* axis : m_ageChart->axes(Qt::Horizontal)) { // the theme reset its font
        QFont small = axis->labelsFont();
        small.setPointSizeF(QFont().pointSizeF() * 0.78);
        axis->setLabelsFont(small);
    }
}

void OverviewView::setSources(const std::vector<SourceHealth>& sources) {
    for (const SourceHealth& h : sources) {
        if (!h.configured)
            continue;
        QString why;
        if (h.state == SourceState::Down)
            why = tr("%1 is down since %2 %3")
                      .arg(h.source == "postgres" ? tr("PostgreSQL") : tr("Kafka"))
                      .arg(displayDateTime(h.since, TimeDetail::Seconds))
                      .arg(zoneLabel(h.since));
        else if (h.state == SourceState::Connecting || h.state == SourceState::Loading)
            why = tr("%1 is still loading the window")
                      .arg(h.source == "postgres" ? tr("PostgreSQL") : tr("Kafka"));
        (h.source == "postgres" ? m_pgOut : m_kafkaOut) = why;
    }
    showFigures();
}

void OverviewView::markStale(QLabel* value, const QString& why) {
    value->setText(QStringLiteral("\u2014"));
    value->setToolTip(tr("Stale: %1. The figure comes back when it is read again.").arg(why));
    if (QLabel* caption = m_captions[value])
        caption->setText(caption->text().section(QStringLiteral(" \u26a0"), 0, 0) +
                         QStringLiteral(" \u26a0 stale"));
}

void OverviewView::setNotRead(bool records, bool attempts, bool receipts) {
    for (QLabel* l : m_notRead) {
        l->setText(QStringLiteral("\u2014"));
        l->setEnabled(true);
        l->setToolTip({});
    }
    m_notRead.clear();
    const auto off = [&](QLabel* l, const QString& why) {
        m_notRead.push_back(l);
        l->setText(tr("not read"));
        l->setEnabled(false); // greyed: not a figure
        l->setToolTip(why);
    };
    const QString noRecord = tr("PostgreSQL is not read ([postgres] enabled = false)");
    if (!records)
        for (QLabel* l : {m_processing, m_success, m_failed})
            off(l, noRecord);
    if (!attempts)
        off(m_attempts, records ? tr("The attempt log is not read ([postgres.attempt] enabled = "
                                     "false)")
                                : noRecord);
    if (!receipts)
        off(m_receipts, tr("No receipt topics are read (kafka.receipt_topics is empty)"));
}

void OverviewView::showFigures() {
    const auto show = [&](QLabel* l, const QString& text, const QString& out) {
        if (std::find(m_notRead.begin(), m_notRead.end(), l) != m_notRead.end())
            return;
        if (!out.isEmpty() || !m_last.statsIncluded) {
            markStale(l, out.isEmpty() ? tr("not read yet") : out);
            return;
        }
        l->setText(text);
        l->setToolTip({});
        if (QLabel* caption = m_captions[l])
            caption->setText(caption->text().section(QStringLiteral(" \u26a0"), 0, 0));
    };
    const DashboardSnapshot& s = m_last;
    show(m_processing, QString::number(s.recordsByStatus[0]), m_pgOut);
    show(m_success, QString::number(s.recordsByStatus[1]), m_pgOut);
    show(m_failed, QString::number(s.recordsByStatus[2]), m_pgOut);
    show(m_attempts, QString::number(s.attemptsPerSec, 'f', 1), m_pgOut);
    show(m_receipts, QString::number(s.receiptsPerSec, 'f', 1), m_kafkaOut);
    // Anomalies and calls come from both: shown, but marked partial while
    // one source is out, and "—" until the window is judged.
    const QString out = !m_pgOut.isEmpty() && !m_kafkaOut.isEmpty()
                            ? QString(m_pgOut + QStringLiteral("; ") + m_kafkaOut)
                            : QString(m_pgOut + m_kafkaOut);
    const auto partial = [&](QLabel* l, int n) {
        if (!m_judged) {
            markStale(l, tr("the window is still being loaded"));
            return;
        }
        l->setText(QString::number(n));
        QLabel* caption = m_captions[l];
        const QString base = caption->text().section(QStringLiteral(" \u26a0"), 0, 0);
        if (out.isEmpty()) {
            caption->setText(base);
            l->setToolTip({});
        } else {
            caption->setText(base + QStringLiteral(" \u26a0 partial"));
            l->setToolTip(
                tr("Partial: %1; what depends on it cannot be detected meanwhile.").arg(out));
        }
    };
    partial(m_critical, m_bySeverity[2]);
    partial(m_warning, m_bySeverity[1]);
    partial(m_info, m_bySeverity[0]);
    if (s.statsIncluded) {
        m_calls->setText(QString::number(s.calls));
        m_calls->setToolTip(tr("%1 held in full, %2 packed (final and healthy)")
                                .arg(s.calls - s.packedCalls)
                                .arg(s.packedCalls));
        m_rejected->setText(QString::number(s.rejected));
    }
    if (!s.rejectedSamples.empty()) {
        QStringList tip;
        for (const auto& x : s.rejectedSamples)
            tip << shownText(x);
        m_rejected->setToolTip(plainTip(tip.join(QLatin1Char('\n'))));
    }
}

void OverviewView::update(const DashboardSnapshot& s,
                          const std::array<int, kAnomalyKindCount>& openByKind,
                          const std::array<int, 3>& openBySeverity) {
    m_byKind = openByKind;
    m_bySeverity = openBySeverity;
    m_judged = s.windowJudged;
    if (s.statsIncluded) {
        m_last = s;
        m_last.changes.clear();
    }
    setSources(s.sources); // shows the figures
    if (!s.statsIncluded)
        return;

    m_points.push_back(
        {s.at, {s.receiptsPerSec, s.attemptsPerSec, s.callerEventsPerSec, s.recordsPerSec}});
    while (m_points.size() > kHistory)
        m_points.pop_front();
    double top = 1;
    for (int k = 0; k < 4; ++k) {
        QList<QPointF> pts;
        pts.reserve(static_cast<qsizetype>(m_points.size()));
        for (const Point& p : m_points) {
            pts.append(QPointF(double(chartMillis(p.at)), p.values[k]));
            top = std::max(top, p.values[k]);
        }
        m_throughput[k]->replace(pts); // one bulk update per series
    }
    const EpochMillis first = m_points.front().at;
    m_throughputX->setRange(
        QDateTime::fromMSecsSinceEpoch(chartMillis(first)),
        QDateTime::fromMSecsSinceEpoch(chartMillis(std::max(s.at, first + 10'000))));
    m_throughputX->setTitleText(tr("time (%1)").arg(zoneLabel(s.at)));
    m_throughputY->setRange(0, top < 5 ? 5 : top * 1.1);
    m_throughputY->setTickType(QValueAxis::TicksDynamic);
    m_throughputY->setTickAnchor(0);
    m_throughputY->setTickInterval(niceStep(top));

    int ageTop = 1;
    for (std::size_t i = 0; i < s.processingAges.size(); ++i) {
        m_ages->replace(static_cast<qsizetype>(i), s.processingAges[i]);
        ageTop = std::max(ageTop, s.processingAges[i]);
    }
    m_agesY->setRange(0, ageTop < 5 ? 5 : ageTop * 1.1);
    m_agesY->setTickType(QValueAxis::TicksDynamic);
    m_agesY->setTickAnchor(0);
    m_agesY->setTickInterval(niceStep(ageTop));

    m_anomalyPoints.emplace_back(s.at, openByKind);
    while (m_anomalyPoints.size() > kHistory)
        m_anomalyPoints.pop_front();
    int anomalyTop = 1;
    for (std::size_t k = 0; k < openByKind.size(); ++k) {
        if (openByKind[k] == 0 && !m_anomalySeries.count(static_cast<int>(k)))
            continue;
        QLineSeries*& series = m_anomalySeries[static_cast<int>(k)];
        if (!series) {
            series = new QLineSeries;
            series->setName(qs(kAnomalyKindNames[k]));
            m_anomalyChart->addSeries(series);
            series->attachAxis(m_anomalyX);
            series->attachAxis(m_anomalyY);
            series->setColor(kindColor(k));
        }
        QList<QPointF> pts;
        for (const auto& [at, counts] : m_anomalyPoints) {
            pts.append(QPointF(double(chartMillis(at)), counts[k]));
            anomalyTop = std::max(anomalyTop, counts[k]);
        }
        series->replace(pts);
    }
    m_anomalyX->setRange(QDateTime::fromMSecsSinceEpoch(chartMillis(m_anomalyPoints.front().first)),
                         QDateTime::fromMSecsSinceEpoch(
                             chartMillis(std::max(s.at, m_anomalyPoints.front().first + 10'000))));
    m_anomalyX->setTitleText(tr("time (%1)").arg(zoneLabel(s.at)));
    // The legend: every kind seen, in its colour, with its open count now.
    std::vector<KindLegend::Entry> legend;
    for (const auto& [kind, series] : m_anomalySeries) {
        const auto k = static_cast<std::size_t>(kind);
        legend.push_back({kindColor(k), qs(kAnomalyKindNames[k]), openByKind[k]});
    }
    m_anomalyLegend->setEntries(std::move(legend));
    m_anomalyY->setRange(0, anomalyTop < 5 ? 5 : anomalyTop * 1.15);
    m_anomalyY->setTickType(QValueAxis::TicksDynamic);
    m_anomalyY->setTickAnchor(0);
    m_anomalyY->setTickInterval(niceStep(anomalyTop));
}

} // namespace callscope
