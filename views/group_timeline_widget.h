#pragma once
// The drill-down's group view: every callId of the call's group (a key
// rotation, a rewritten pair, or calls picked with Compare with…) on one
// time axis, fitted to their lives (views/timeline_painter.h paints it, as
// reports do). A click on a member's band opens that callId.
#include "models/call_group.h"

#include <QWidget>

namespace callscope {

class GroupTimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit GroupTimelineWidget(QWidget* parent = nullptr);
    void setGroup(const CallGroup& group);
    const CallGroup& group() const { return m_group; }
    // The member whose band is under `pos`, or -1.
    int memberAt(const QPoint& pos) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void callActivated(const QString& callId);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;

private:
    CallGroup m_group;
};

} // namespace callscope
