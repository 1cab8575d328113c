#include "views/group_timeline_widget.h"

#include "views/palette.h"
#include "views/timeline_painter.h"

#include <QMouseEvent>
#include <QPainter>

namespace callscope {

GroupTimelineWidget::GroupTimelineWidget(QWidget* parent) : QWidget(parent) {
    setAutoFillBackground(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setToolTip(tr("Double-click a callId's band to open it"));
}

void GroupTimelineWidget::setGroup(const CallGroup& group) {
    m_group = group;
    setAccessibleDescription(groupTitle(m_group));
    updateGeometry();
    update();
}

QSize GroupTimelineWidget::sizeHint() const {
    return {800, int(GroupTimelineLayout::heightFor(m_group.members.size()))};
}

QSize GroupTimelineWidget::minimumSizeHint() const {
    return {400, int(GroupTimelineLayout::heightFor(m_group.members.size()))};
}

int GroupTimelineWidget::memberAt(const QPoint& pos) const {
    using L = GroupTimelineLayout;
    const double y = pos.y() - (22 + L::kAxisHeight);
    if (y < 0)
        return -1;
    const auto k = static_cast<std::size_t>(y / L::kBandHeight);
    return k < m_group.members.size() ? int(k) : -1;
}

void GroupTimelineWidget::mouseDoubleClickEvent(QMouseEvent* e) {
    const int k = memberAt(e->position().toPoint());
    if (k >= 0)
        emit callActivated(qs(m_group.members[std::size_t(k)].timeline.callId));
}

void GroupTimelineWidget::paintEvent(QPaintEvent*) {
    if (m_group.members.empty())
        return;
    QPainter p(this);
    const QRectF bounds = QRectF(rect()).adjusted(2, 2, -2, -2);
    const TimeAxis axis =
        fittedGroupAxis(m_group, bounds.width() - GroupTimelineLayout::kLabelWidth - 12);
    paintGroupTimeline(p, bounds, m_group, axis, palette());
}

} // namespace callscope
