#pragma once
// The drill-down's timeline: zoom with the wheel or +/-, pan by dragging or
// with the arrow keys, 0 or a double-click fits; hover shows exact times.
#include "models/dashboard_data.h"
#include "models/timeline_axis.h"

#include <QSet>
#include <QWidget>

namespace callscope {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setTimeline(const CallTimeline& timeline, const QSet<QString>& outlined);
    void clear();
    const TimeAxis& axis() const { return m_axis; }
    void fit();
    QSize sizeHint() const override { return {900, 230}; }
    QSize minimumSizeHint() const override { return {400, 200}; }

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    bool event(QEvent*) override;

private:
    void syncWidth();
    CallTimeline m_timeline;
    QSet<QString> m_outlined;
    TimeAxis m_axis;
    bool m_dragging = false;
    double m_lastX = 0;
};

} // namespace callscope
