#pragma once
// The drill-down's timeline: zoom with the wheel or +/- (between 10 ms and a
// few times the call's life), pan by dragging or with the arrow keys, 0 or a
// double-click fits the call's whole life; hover shows exact times in the
// display zone; a right-click offers copies and fit. Calls still open show
// a "now" line, and a key below the lanes says what colours and shapes mean.
#include "models/dashboard_data.h"
#include "models/timeline_axis.h"

#include <QSet>
#include <QWidget>

#include <memory>

class QMenu;

namespace callscope {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setTimeline(const CallTimeline& timeline, const QSet<QString>& outlined);
    void clear();
    const CallTimeline& timeline() const { return m_timeline; }
    const TimeAxis& axis() const { return m_axis; }
    void fit();
    // Where the "now" line is drawn (widget x), or -1: none (a finished
    // call) or off screen. The time is the timeline's now (timelineNow).
    double nowX() const;
    EpochMillis now() const { return m_now; }
    // The entry under `pos` (widget coordinates), or -1.
    int entryAt(const QPoint& pos) const;
    // An entry as its tooltip shows it: rich text, or plain for the clipboard.
    QString entryText(int index, bool html) const;
    // The time under `pos` as "Copy time here" copies it (display zone,
    // millis, zone named), or empty outside the plot.
    QString timeTextAt(const QPoint& pos) const;
    // The context menu for a right-click at `pos` (the caller owns it; shown
    // by contextMenuEvent, inspected by tests without exec()).
    std::unique_ptr<QMenu> contextMenuAt(const QPoint& pos);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    void contextMenuEvent(QContextMenuEvent*) override;
    bool event(QEvent*) override;

private:
    void syncWidth();
    void updateKeyHeight();
    CallTimeline m_timeline;
    QSet<QString> m_outlined;
    TimeAxis m_axis;
    EpochMillis m_now = kNoTime;
    int m_keyHeight = 0;
    bool m_dragging = false;
    double m_lastX = 0;
};

} // namespace callscope
