#include "views/advisor_view.h"

#include "views/clock.h"
#include "views/palette.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace callscope {

namespace {

constexpr double kDecades = double(kHistogramBuckets) / kBucketsPerDecade; // 1 ms .. 10^8 ms

// Where `ms` lies on the log axis, 0..1.
double axisFraction(double ms) {
    return ms <= 1 ? 0.0 : std::clamp(std::log10(ms) / kDecades, 0.0, 1.0);
}

QString durationText(std::int64_t ms) {
    return QString::fromStdString(adviceDuration(ms));
}

} // namespace

HistogramWidget::HistogramWidget(const QString& title, QWidget* parent)
    : QWidget(parent), m_title(title) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HistogramWidget::setDistribution(const Distribution& d, std::vector<Line> lines) {
    m_d = d;
    m_lines = std::move(lines);
    setToolTip(d.count == 0
                   ? tr("%1: nothing measured").arg(m_title)
                   : tr("%1: %2 samples; p50 %3, p90 %4, p99 %5, p99.9 %6, max %7")
                         .arg(m_title)
                         .arg(d.count)
                         .arg(durationText(d.p50), durationText(d.p90), durationText(d.p99),
                              durationText(d.p999), durationText(d.max)));
    update();
}

void HistogramWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QFontMetrics fm(font());
    const int line = fm.height();
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(8, 4, width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter,
               m_title + (m_d.count > 0 ? tr("  (%1 samples)").arg(m_d.count) : QString()));
    p.setFont(font());
    // Room above the bars for four rows of percentile labels, below for the axis.
    const QRectF plot(40, 8 + line * 5.2, width() - 56, height() - (8 + line * 5.2) - line * 2.6);
    if (plot.width() < 40 || plot.height() < 20)
        return;
    QColor grid = pal.color(QPalette::Mid);
    grid.setAlpha(110);
    p.setPen(grid);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    const auto xOf = [&](double ms) { return plot.left() + axisFraction(ms) * plot.width(); };
    // The axis: round durations, a log scale.
    const std::pair<double, const char*> ticks[] = {{1, "1 ms"},   {10, "10 ms"},  {100, "100 ms"},
                                                    {1e3, "1 s"},  {1e4, "10 s"},  {6e4, "1 m"},
                                                    {6e5, "10 m"}, {3.6e6, "1 h"}, {3.6e7, "10 h"}};
    for (const auto& [ms, label] : ticks) {
        const double x = xOf(ms);
        p.setPen(grid);
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom() + 3));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRectF(x - 40, plot.bottom() + 4, 80, line), Qt::AlignHCenter | Qt::AlignTop,
                   QString::fromLatin1(label));
    }
    p.drawText(QRectF(plot.left(), plot.bottom() + 4 + line, plot.width(), line),
               Qt::AlignRight | Qt::AlignTop, tr("log time"));
    if (m_d.count == 0) {
        p.drawText(plot, Qt::AlignCenter, tr("nothing measured in this window"));
        return;
    }
    const std::int64_t peak = *std::max_element(m_d.histogram.begin(), m_d.histogram.end());
    const QColor bar = pal.color(QPalette::Highlight);
    for (std::size_t b = 0; b < m_d.histogram.size(); ++b) {
        if (m_d.histogram[b] == 0)
            continue;
        const double x0 = xOf(bucketFloorMs(b)), x1 = xOf(bucketFloorMs(b + 1));
        const double h = std::max(1.5, double(m_d.histogram[b]) / double(peak) * plot.height());
        p.fillRect(QRectF(x0 + 0.5, plot.bottom() - h, std::max(1.0, x1 - x0 - 1.0), h), bar);
    }
    // Percentiles: a line each, their labels on rows of their own.
    const std::pair<const char*, std::int64_t> marks[] = {
        {"p50", m_d.p50}, {"p90", m_d.p90}, {"p99", m_d.p99}, {"p99.9", m_d.p999}};
    int row = 0;
    for (const auto& [name, ms] : marks) {
        const double x = xOf(double(ms));
        p.setPen(QPen(pal.color(QPalette::Text), 1, Qt::DotLine));
        const double top = 8 + line * (1.2 + row);
        p.drawLine(QPointF(x, top + line), QPointF(x, plot.bottom()));
        p.setPen(pal.color(QPalette::Text));
        const QString text = QStringLiteral("%1 %2").arg(QLatin1String(name), durationText(ms));
        const int w = fm.horizontalAdvance(text) + 4;
        const double left = std::clamp(x - w / 2.0, 0.0, double(width() - w));
        p.drawText(QRectF(left, top, w, line), Qt::AlignCenter, text);
        ++row;
    }
    // The windows: configured (as the records carry it) and recommended.
    int lineRow = 0;
    for (const Line& l : m_lines) {
        const double x = xOf(double(l.ms));
        p.setPen(QPen(l.color, 2, l.dashed ? Qt::DashLine : Qt::SolidLine));
        p.drawLine(QPointF(x, plot.top() - line * 0.2), QPointF(x, plot.bottom()));
        const QString text = l.label + QStringLiteral(" ") + durationText(l.ms);
        const int w = fm.horizontalAdvance(text) + 6;
        const double left = x + 4 + w > plot.right() ? x - 4 - w : x + 4;
        p.setPen(l.color);
        p.drawText(QRectF(left, plot.top() + lineRow * line, w, line),
                   Qt::AlignLeft | Qt::AlignVCenter, text);
        ++lineRow;
    }
}

AdvisorView::AdvisorView(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_recommendations(new QLabel(this)),
      m_atRisk(new QListWidget(this)), m_safety(new QDoubleSpinBox(this)),
      m_measure(new QPushButton(tr("&Measure"), this)) {
    const QString titles[] = {tr("Processing (executed attempt: arrived \u2192 finished)"),
                              tr("Retry delay (first attempt \u2192 each later one)"),
                              tr("Receipt delay (record terminal \u2192 first terminal receipt)"),
                              tr("Confirmation delay (AWAITING_RESPONSE \u2192 CONFIRMED_*)")};
    auto* grid = new QGridLayout;
    for (int i = 0; i < 4; ++i) {
        m_histograms[i] = new HistogramWidget(titles[i], this);
        grid->addWidget(m_histograms[i], i / 2, i % 2);
    }
    m_safety->setRange(1.0, 100.0);
    m_safety->setSingleStep(0.5);
    m_safety->setValue(2.0);
    m_safety->setPrefix(tr("safety \u00d7"));
    m_safety->setToolTip(tr("The window's and the receipt budget's margin over the measured tail"));
    m_measure->setToolTip(tr("Measure the calls held now"));
    m_summary->setObjectName(QStringLiteral("adviceSummary"));
    m_summary->setWordWrap(true);
    m_recommendations->setObjectName(QStringLiteral("adviceRecommendations"));
    m_recommendations->setTextFormat(Qt::PlainText);
    m_recommendations->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_recommendations->setWordWrap(true);
    m_recommendations->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_atRisk->setObjectName(QStringLiteral("adviceAtRisk"));
    m_atRisk->setToolTip(tr("Retried after, or within 10% of, the record's expiry, or executed "
                            "again after it (expired_replay). Double-click: its drill-down."));
    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_safety);
    top->addWidget(m_measure);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_recommendations, 3);
    auto* risk = new QVBoxLayout;
    risk->addWidget(new QLabel(tr("At risk of expired_replay:"), this));
    risk->addWidget(m_atRisk, 1);
    bottom->addLayout(risk, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(grid, 3);
    layout->addLayout(bottom, 1);
    m_summary->setText(tr("The protocol's window and timeouts come from the slowest processing "
                          "and the longest wait before a human looks, never from feel. "
                          "Measure the calls held."));
    connect(m_measure, &QPushButton::clicked, this,
            [this] { emit adviceRequested(m_safety->value()); });
    connect(m_atRisk, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        emit callRequested(item->data(Qt::UserRole).toString());
    });
}

void AdvisorView::setAdvice(std::shared_ptr<const Advice> advice) {
    if (!advice)
        return;
    const Advice& a = *advice;
    m_measured = true;
    const QColor configured = severityColor("critical");
    const QColor recommended = stateColor("SUCCESS");
    std::vector<HistogramWidget::Line> windows;
    if (a.observedWindow.count > 0)
        windows.push_back(
            {a.observedWindow.min, tr("configured window (shortest)"), configured, true});
    if (a.recommendedWindowMs)
        windows.push_back({*a.recommendedWindowMs, tr("recommended window"), recommended, false});
    std::vector<HistogramWidget::Line> stale;
    if (a.recommendedStaleTimeoutMs)
        stale.push_back({*a.recommendedStaleTimeoutMs, tr("stale timeout"), recommended, false});
    std::vector<HistogramWidget::Line> receipt;
    if (a.recommendedReceiptBudgetMs)
        receipt.push_back(
            {*a.recommendedReceiptBudgetMs, tr("receipt budget"), recommended, false});
    m_histograms[0]->setDistribution(a.processing, stale);
    m_histograms[1]->setDistribution(a.retryDelay, windows);
    m_histograms[2]->setDistribution(a.receiptDelay, receipt);
    m_histograms[3]->setDistribution(a.confirmationDelay, windows);
    m_summary->setText(tr("Measured %1 \u2013 %2 %3 (the calls held).")
                           .arg(displayDateTime(a.from, TimeDetail::Seconds),
                                displayDateTime(a.to, TimeDetail::Seconds), zoneLabel(a.to)));
    QStringList lines;
    const auto say = [&](const std::string& arithmetic, const QString& missing) {
        lines << (arithmetic.empty() ? missing : QString::fromStdString(arithmetic));
    };
    say(a.windowArithmetic, tr("window: no retries or confirmations measured"));
    say(a.staleArithmetic, tr("stale PROCESSING timeout: no executions measured"));
    say(a.receiptArithmetic, tr("receipt redelivery budget: no terminal receipts measured"));
    if (a.observedWindow.count > 0)
        lines << tr("configured windows: shortest %1, median %2%3")
                     .arg(durationText(a.observedWindow.min), durationText(a.observedWindow.p50),
                          a.windowsShorterThanRecommended > 0
                              ? tr("; %1 records shorter than recommended")
                                    .arg(a.windowsShorterThanRecommended)
                              : QString());
    m_recommendations->setText(lines.join(QLatin1Char('\n')));
    m_atRisk->clear();
    for (const std::string& id : a.atRisk) {
        auto* item = new QListWidgetItem(shownText(id), m_atRisk);
        item->setData(Qt::UserRole, qs(id));
    }
}

} // namespace callscope
