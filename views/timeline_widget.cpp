#include "views/timeline_widget.h"

#include "models/visible_text.h"
#include "views/clock.h"
#include "views/palette.h"
#include "views/timeline_painter.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

namespace callscope {
namespace {

// The lanes, axis and instances' legend above the key (TimelineLayout::forRect).
int keyTop() {
    return int(std::ceil(TimelineLayout::forRect(QRectF(0, 0, 1000, 1000)).keyArea.top()));
}

QString stamp(EpochMillis t) {
    return displayDateTime(t, TimeDetail::Millis) + QLatin1Char(' ') + zoneLabel(t);
}

} // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    setAccessibleName(QStringLiteral("call timeline"));
}

QSize TimelineWidget::sizeHint() const {
    return {900, std::max(230, keyTop() + m_keyHeight + 6)};
}

QSize TimelineWidget::minimumSizeHint() const {
    return {400, std::max(200, keyTop() + m_keyHeight + 4)};
}

void TimelineWidget::syncWidth() {
    m_axis.width = TimelineLayout::forRect(rect()).serverLane.width();
}

void TimelineWidget::updateKeyHeight() {
    const int h = m_timeline.entries.empty()
                      ? 0
                      : int(std::ceil(timelineKeyHeight(m_timeline, m_outlined, m_now, font(),
                                                        std::max(width(), 400))));
    if (h != m_keyHeight) {
        m_keyHeight = h;
        updateGeometry();
    }
}

void TimelineWidget::setTimeline(const CallTimeline& t, const QSet<QString>& outlined) {
    m_timeline = t;
    m_outlined = outlined;
    m_now = timelineNow(t);
    updateKeyHeight();
    fit();
}

void TimelineWidget::clear() {
    m_timeline = {};
    m_outlined.clear();
    m_now = kNoTime;
    updateKeyHeight();
    update();
}

// The whole life: first event to the last of events, record update and (for
// an open call) now; a lone instant gets a few seconds around it.
void TimelineWidget::fit() {
    syncWidth();
    const auto [from, to] = timelineLife(m_timeline);
    if (from != kNoTime)
        m_axis.fitLife(from, to);
    update();
}

double TimelineWidget::nowX() const {
    if (m_now == kNoTime || !m_axis.visible(m_now))
        return -1;
    return TimelineLayout::forRect(rect()).serverLane.left() + m_axis.x(m_now);
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    syncWidth();
    updateKeyHeight();
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    if (m_timeline.entries.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter,
                   tr("Search a callId or a bizNo (Ctrl+F), or open an anomaly"));
        return;
    }
    TimelinePaintOptions options;
    options.now = m_now;
    options.key = true;
    paintTimeline(p, TimelineLayout::forRect(rect()), m_timeline, m_axis, m_outlined, palette(),
                  options);
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
        return;
    }
    if (e->button() == Qt::BackButton || e->button() == Qt::ForwardButton)
        e->ignore(); // history: the drill-down around it goes back or forward
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

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton)
        fit();
    else
        e->ignore();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
    if (e->modifiers() & (Qt::AltModifier | Qt::ControlModifier)) {
        QWidget::keyPressEvent(e); // Alt+Left/Right: history, not panning
        return;
    }
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

int TimelineWidget::entryAt(const QPoint& pos) const {
    if (m_timeline.entries.empty())
        return -1;
    return timelineEntryAt(TimelineLayout::forRect(rect()), m_timeline, m_axis, pos);
}

QString TimelineWidget::entryText(int index, bool html) const {
    if (index < 0 || static_cast<std::size_t>(index) >= m_timeline.entries.size())
        return {};
    const TimelineEntry& x = m_timeline.entries[static_cast<std::size_t>(index)];
    if (!html) {
        QString s = stamp(x.at) + QLatin1Char('\n') + shownText(x.text);
        if (x.until != kNoTime)
            s += QStringLiteral("\nfinished ") + stamp(x.until);
        if (!x.digest.empty())
            s += QStringLiteral("\ndigest ") + shownText(x.digest);
        return s;
    }
    QString tip = QStringLiteral("<b>") + stamp(x.at).toHtmlEscaped() + QStringLiteral("</b><br>") +
                  htmlText(x.text);
    if (x.until != kNoTime)
        tip += QStringLiteral("<br>finished ") + stamp(x.until).toHtmlEscaped();
    if (!x.digest.empty())
        tip += QStringLiteral("<br>digest <tt>") + htmlText(x.digest) + QStringLiteral("</tt>");
    return tip;
}

QString TimelineWidget::timeTextAt(const QPoint& pos) const {
    const QRectF plot = TimelineLayout::forRect(rect()).plot();
    if (m_timeline.entries.empty() || pos.x() < plot.left() || pos.x() > plot.right())
        return {};
    return stamp(m_axis.time(pos.x() - plot.left()));
}

std::unique_ptr<QMenu> TimelineWidget::contextMenuAt(const QPoint& pos) {
    auto menu = std::make_unique<QMenu>(this);
    QAction* copyId = menu->addAction(tr("Copy callId"));
    copyId->setEnabled(!m_timeline.callId.empty());
    // Control characters are copied as shown: pasted into a terminal, the raw
    // bytes would act.
    const std::string id = m_timeline.callId;
    connect(copyId, &QAction::triggered, this, [id] {
        QApplication::clipboard()->setText(needsVisibleEscape(id) ? shownText(id) : qs(id));
    });
    const QString when = timeTextAt(pos);
    QAction* copyTime = menu->addAction(tr("Copy time here"));
    copyTime->setEnabled(!when.isEmpty());
    copyTime->setToolTip(when);
    connect(copyTime, &QAction::triggered, this,
            [when] { QApplication::clipboard()->setText(when); });
    const int k = entryAt(pos);
    if (k >= 0) {
        const QString text = entryText(k, false);
        QAction* copyEvent = menu->addAction(tr("Copy event"));
        copyEvent->setToolTip(plainTip(text));
        connect(copyEvent, &QAction::triggered, this,
                [text] { QApplication::clipboard()->setText(text); });
    }
    menu->addSeparator();
    QAction* fitAction = menu->addAction(tr("Fit"));
    fitAction->setShortcut(QKeySequence(Qt::Key_0)); // shown; the key itself is keyPressEvent's
    fitAction->setShortcutContext(Qt::WidgetShortcut);
    fitAction->setEnabled(!m_timeline.entries.empty());
    connect(fitAction, &QAction::triggered, this, &TimelineWidget::fit);
    return menu;
}

void TimelineWidget::contextMenuEvent(QContextMenuEvent* e) {
    const std::unique_ptr<QMenu> menu = contextMenuAt(e->pos());
    menu->exec(e->globalPos());
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int k = entryAt(help->pos());
        if (k < 0) {
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        QToolTip::showText(help->globalPos(), entryText(k, true), this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace callscope
