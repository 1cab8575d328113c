#pragma once
// Live KPIs and charts: throughput over time, PROCESSING age histogram,
// open anomalies over time by kind. Series are updated in place.
#include "models/dashboard_data.h"

#include <QColor>
#include <QWidget>

#include <deque>
#include <map>
#include <vector>

class QLabel;
class QChart;
class QChartView;
class QLineSeries;
class QBarSet;
class QDateTimeAxis;
class QValueAxis;

namespace callscope {

// The anomaly chart's legend: every kind seen, in its colour, with its open
// count. Painted, not rich text: a count changing (many times a second at
// load) repaints it without laying the overview out again, which a rich-text
// label's table cost on every change (issue 12: 2 ms of a frame).
class KindLegend : public QWidget {
public:
    struct Entry {
        QColor colour;
        QString name;
        int count = 0;
    };
    explicit KindLegend(QWidget* parent);
    void setEntries(std::vector<Entry> entries);
    const std::vector<Entry>& entries() const { return m_entries; }
    // "name count" a line (tooltips, tests).
    QString text() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    QSize measure() const;
    std::vector<Entry> m_entries;
    QSize m_hint;
};

class OverviewView : public QWidget {
    Q_OBJECT
public:
    explicit OverviewView(QWidget* parent = nullptr);
    // `openByKind` and `openBySeverity` come from the anomaly model.
    void update(const DashboardSnapshot& s, const std::array<int, kAnomalyKindCount>& openByKind,
                const std::array<int, 3>& openBySeverity);
    // Sources this deployment does not read: their tiles say "not read"
    // instead of zeros that would look like a quiet system.
    void setNotRead(bool records, bool attempts, bool receipts);
    // The sources' states: a figure that depends on a source that is down
    // (or still loading) shows "—" marked stale, never a zero; figures fed by
    // both are marked partial.
    void setSources(const std::vector<SourceHealth>& sources);
    KindLegend* anomalyLegend() const { return m_anomalyLegend; }

protected:
    void changeEvent(QEvent* event) override;

private:
    QWidget* tile(const QString& title, QLabel** value);
    struct Point {
        EpochMillis at;
        double values[4];
    };
    void showFigures();
    void markStale(QLabel* value, const QString& why);
    std::vector<QLabel*> m_notRead; // tiles left alone by update()
    QString m_pgOut, m_kafkaOut; // why PostgreSQL / Kafka figures are not current ("" if they are)
    bool m_judged = false;       // the window has been judged
    DashboardSnapshot m_last;    // the last 1 Hz figures
    std::array<int, kAnomalyKindCount> m_byKind{};
    std::array<int, 3> m_bySeverity{};
    KindLegend* m_anomalyLegend;
    std::map<QLabel*, QLabel*> m_captions; // value -> its tile's title
    QLabel *m_processing, *m_success, *m_failed, *m_receipts, *m_attempts, *m_critical, *m_warning,
        *m_info, *m_calls, *m_rejected;
    QChart* m_throughputChart;
    QLineSeries* m_throughput[4];
    QDateTimeAxis* m_throughputX;
    QValueAxis* m_throughputY;
    QChart* m_ageChart;
    QBarSet* m_ages;
    QValueAxis* m_agesY;
    QChart* m_anomalyChart;
    QDateTimeAxis* m_anomalyX;
    QValueAxis* m_anomalyY;
    std::map<int, QLineSeries*> m_anomalySeries; // by kind, added when first seen
    std::deque<Point> m_points;
    std::deque<std::pair<EpochMillis, std::array<int, kAnomalyKindCount>>> m_anomalyPoints;
};

} // namespace callscope
