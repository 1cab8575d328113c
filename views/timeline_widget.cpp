#include "views/timeline_widget.h"

#include "views/palette.h"
#include "views/timeline_painter.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

namespace callscope {

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    setAccessibleName(QStringLiteral("call timeline"));
}

void TimelineWidget::syncWidth() {
    m_axis.width = TimelineLayout::forRect(rect()).serverLane.width();
}

void TimelineWidget::setTimeline(const CallTimeline& t, const QSet<QString>& outlined) {
    m_timeline = t;
    m_outlined = outlined;
    fit();
}

void TimelineWidget::clear() {
    m_timeline = {};
    m_outlined.clear();
    update();
}

void TimelineWidget::fit() {
    syncWidth();
    if (m_timeline.from != kNoTime) {
        EpochMillis to = m_timeline.from;
        for (const TimelineEntry& e : m_timeline.entries)
            to = std::max({to, e.at, e.until});
        m_axis.fit(m_timeline.from, to);
    }
    update();
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    syncWidth();
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    if (m_timeline.entries.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter,
                   tr("Search a callId or a bizNo (Ctrl+F), or open an anomaly"));
        return;
    }
    paintTimeline(p, TimelineLayout::forRect(rect()), m_timeline, m_axis, m_outlined, palette());
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
    const double steps = e->angleDelta().y() / 120.0;
    const double x = e->position().x() - TimelineLayout::forRect(rect()).serverLane.left();
    m_axis.zoom(std::pow(1.25, steps), x);
    update();
    e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) {
        m_dragging = true;
        m_lastX = e->position().x();
        setCursor(Qt::ClosedHandCursor);
    }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
    if (m_dragging) {
        m_axis.pan(e->position().x() - m_lastX);
        m_lastX = e->position().x();
        update();
    }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent*) {
    m_dragging = false;
    unsetCursor();
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent*) {
    fit();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
    const double mid = m_axis.width / 2;
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        m_axis.zoom(1.5, mid);
        break;
    case Qt::Key_Minus:
        m_axis.zoom(1 / 1.5, mid);
        break;
    case Qt::Key_0:
        fit();
        return;
    case Qt::Key_Left:
        m_axis.pan(m_axis.width / 10);
        break;
    case Qt::Key_Right:
        m_axis.pan(-m_axis.width / 10);
        break;
    default:
        QWidget::keyPressEvent(e);
        return;
    }
    update();
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int k =
            timelineEntryAt(TimelineLayout::forRect(rect()), m_timeline, m_axis, help->pos());
        if (k < 0) {
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        const TimelineEntry& x = m_timeline.entries[static_cast<std::size_t>(k)];
        QString tip = QStringLiteral("<b>") + qs(formatIsoMillis(x.at)) +
                      QStringLiteral("</b><br>") + htmlText(x.text);
        if (x.until != kNoTime)
            tip += QStringLiteral("<br>finished ") + qs(formatIsoMillis(x.until));
        if (!x.digest.empty())
            tip += QStringLiteral("<br>digest <tt>") + htmlText(x.digest) + QStringLiteral("</tt>");
        QToolTip::showText(help->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace callscope
