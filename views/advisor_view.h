#pragma once
// The Advisor tab (issue 14): the tails the protocol's parameters must outlast
// — processing, retry delay, receipt delay, confirmation delay — each as a
// histogram on a log time axis with its percentiles marked and the configured
// window drawn; the recommendations with their arithmetic, and the callIds at
// risk of expired_replay (double-click opens one).
#include "models/advice.h"

#include <QWidget>

#include <memory>

class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;

namespace callscope {

// One distribution on a log time axis (1 ms .. ~28 h): bars per bucket,
// p50/p90/p99/p99.9 markers, and optional vertical lines (a window).
class HistogramWidget : public QWidget {
    Q_OBJECT
public:
    struct Line {
        std::int64_t ms = 0;
        QString label;
        QColor color;
        bool dashed = false;
    };
    explicit HistogramWidget(const QString& title, QWidget* parent = nullptr);
    void setDistribution(const Distribution& d, std::vector<Line> lines = {});
    QSize minimumSizeHint() const override { return {320, 190}; }

protected:
    void paintEvent(QPaintEvent* e) override;

private:
    QString m_title;
    Distribution m_d;
    std::vector<Line> m_lines;
};

class AdvisorView : public QWidget {
    Q_OBJECT
public:
    explicit AdvisorView(QWidget* parent = nullptr);
    void setAdvice(std::shared_ptr<const Advice> advice);
    HistogramWidget* histogram(int i) const { return m_histograms[i]; } // 0..3
    QListWidget* atRisk() const { return m_atRisk; }
    QLabel* recommendations() const { return m_recommendations; }
    bool measured() const { return m_measured; } // advice has arrived

signals:
    void adviceRequested(double safety);
    void callRequested(const QString& callId);

private:
    HistogramWidget* m_histograms[4];
    QLabel* m_summary;
    QLabel* m_recommendations;
    QListWidget* m_atRisk;
    QDoubleSpinBox* m_safety;
    QPushButton* m_measure;
    bool m_measured = false;
};

} // namespace callscope
