#include "views/notifier.h"

#include "views/palette.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QMouseEvent>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTimer>
#include <QVBoxLayout>

#include <map>

namespace callscope {

namespace {
const QString kMuted = QStringLiteral("notifications/muted");
const QString kEnabled = QStringLiteral("notifications/enabled");
constexpr int kCoalesceMs = 3000; // openings this close together are one message
constexpr int kToastMs = 12'000;  // how long the toast stays
} // namespace

Notifier::Notifier(QWidget* host)
    : QObject(host), m_host(host), m_toast(new QFrame(host)), m_toastTitle(new QLabel(m_toast)),
      m_toastText(new QLabel(m_toast)), m_mute(new QPushButton(m_toast)),
      m_coalesce(new QTimer(this)), m_hide(new QTimer(this)) {
    QSettings settings;
    m_enabled = settings.value(kEnabled, true).toBool();
    for (const QString& name : settings.value(kMuted).toStringList())
        if (const auto kind = anomalyKindFromName(name.toStdString()))
            m_muted.insert(*kind);
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(QApplication::windowIcon(), this);
        m_tray->setToolTip(QStringLiteral("callscope"));
        m_tray->show();
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
            m_host->window()->raise();
            m_host->window()->activateWindow();
            if (!m_lastCallId.isEmpty())
                emit callRequested(m_lastCallId);
        });
    }
    // The toast: a frame in the window's bottom-right corner.
    m_toast->setObjectName(QStringLiteral("notificationToast"));
    m_toast->setFrameShape(QFrame::StyledPanel);
    m_toast->setAutoFillBackground(true);
    m_toast->setStyleSheet(QStringLiteral("#notificationToast { border: 2px solid %1; "
                                          "border-radius: 6px; background: palette(window); }")
                               .arg(severityColor("critical").name()));
    m_toastTitle->setTextFormat(Qt::PlainText);
    QFont bold = m_toastTitle->font();
    bold.setBold(true);
    m_toastTitle->setFont(bold);
    m_toastText->setTextFormat(Qt::PlainText);
    m_toastText->setWordWrap(true);
    m_toastText->setCursor(Qt::PointingHandCursor);
    m_toastText->installEventFilter(this);
    m_toastTitle->installEventFilter(this);
    auto* open = new QPushButton(tr("Open"), m_toast);
    auto* close = new QPushButton(tr("Dismiss"), m_toast);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_mute);
    buttons->addWidget(close);
    buttons->addWidget(open);
    auto* layout = new QVBoxLayout(m_toast);
    layout->addWidget(m_toastTitle);
    layout->addWidget(m_toastText);
    layout->addLayout(buttons);
    m_toast->hide();
    connect(open, &QPushButton::clicked, this, [this] {
        m_toast->hide();
        if (!m_lastCallId.isEmpty())
            emit callRequested(m_lastCallId);
    });
    connect(close, &QPushButton::clicked, m_toast, &QWidget::hide);
    connect(m_mute, &QPushButton::clicked, this, [this] {
        setMuted(m_lastKind, true);
        m_toast->hide();
    });
    m_coalesce->setSingleShot(true);
    connect(m_coalesce, &QTimer::timeout, this, &Notifier::show);
    m_hide->setSingleShot(true);
    connect(m_hide, &QTimer::timeout, m_toast, &QWidget::hide);
    m_host->installEventFilter(this); // keeps the toast in its corner on resize
}

Notifier::~Notifier() = default;

void Notifier::setMuted(AnomalyKind kind, bool muted) {
    if (muted == this->muted(kind))
        return;
    if (muted)
        m_muted.insert(kind);
    else
        m_muted.erase(kind);
    QStringList names;
    for (const AnomalyKind k : m_muted)
        names << qs(toString(k));
    QSettings().setValue(kMuted, names);
    emit mutedChanged(kind, muted);
}

void Notifier::setEnabled(bool enabled) {
    m_enabled = enabled;
    QSettings().setValue(kEnabled, enabled);
    if (!enabled) {
        m_pending.clear();
        m_toast->hide();
    }
}

void Notifier::take(const std::vector<AnomalyChange>& changes, bool live) {
    if (!live || !m_enabled)
        return;
    for (const AnomalyChange& c : changes)
        if (c.what == ChangeKind::Opened && c.anomaly.severity == Severity::Critical &&
            !muted(c.anomaly.kind) && m_pending.size() < 1000) // a burst: one message anyway
            m_pending.push_back(c.anomaly);
    if (!m_pending.empty() && !m_coalesce->isActive())
        m_coalesce->start(kCoalesceMs);
}

void Notifier::flushNow() {
    m_coalesce->stop();
    show();
}

void Notifier::show() {
    if (m_pending.empty())
        return;
    std::map<AnomalyKind, int> byKind;
    for (const Anomaly& a : m_pending)
        byKind[a.kind]++;
    const Anomaly& first = m_pending.front();
    m_lastKind = first.kind;
    m_lastCallId = first.callIds.empty() ? QString() : qs(first.callIds.front());
    m_lastTitle = m_pending.size() == 1
                      ? tr("Critical: %1").arg(qs(toString(first.kind)))
                      : tr("%n critical anomalies", nullptr, int(m_pending.size()));
    QStringList kinds;
    for (const auto& [kind, n] : byKind)
        kinds << (n > 1 ? QStringLiteral("%1 \u00d7%2").arg(qs(toString(kind))).arg(n)
                        : qs(toString(kind)));
    // Data from messages and tables: shown escaped, never as markup.
    m_lastText =
        (m_pending.size() > 1 ? kinds.join(QStringLiteral(", ")) + QLatin1Char('\n') : QString()) +
        shownText(first.summary) + QLatin1Char('\n') +
        tr("callId %1")
            .arg(shownText(first.callIds.empty() ? std::string("-") : first.callIds.front()));
    m_pending.clear();
    if (m_tray && m_tray->supportsMessages()) {
        // Some notification servers read markup in the body: escaped for them.
        m_tray->showMessage(m_lastTitle,
                            QString(m_lastText + tr("\nClick to open it.")).toHtmlEscaped(),
                            QSystemTrayIcon::Critical, kToastMs);
        return;
    }
    m_toastTitle->setText(m_lastTitle);
    m_toastText->setText(m_lastText + tr("\nClick to open it."));
    m_mute->setText(tr("Mute %1").arg(qs(toString(m_lastKind))));
    m_mute->setToolTip(tr("No more notifications for %1 (View \u203a Notifications turns it "
                          "back on)")
                           .arg(qs(toString(m_lastKind))));
    placeToast();
    m_toast->show();
    m_toast->raise();
    m_hide->start(kToastMs);
}

void Notifier::placeToast() {
    const int w = std::max(200, std::min(440, m_host->width() - 24));
    m_toast->setFixedWidth(w);
    // The wrapped text's height at this width.
    m_toast->layout()->activate();
    m_toast->setFixedHeight(m_toast->layout()->hasHeightForWidth()
                                ? m_toast->layout()->totalHeightForWidth(w)
                                : m_toast->sizeHint().height());
    int bottom = m_host->height() - 12;
    for (const QStatusBar* bar : m_host->findChildren<QStatusBar*>())
        if (bar->isVisible())
            bottom -= bar->height();
    m_toast->move(m_host->width() - w - 12, bottom - m_toast->height());
}

bool Notifier::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_host && e->type() == QEvent::Resize && m_toast->isVisible())
        placeToast();
    if ((watched == m_toastText || watched == m_toastTitle) &&
        e->type() == QEvent::MouseButtonRelease) {
        m_toast->hide();
        if (!m_lastCallId.isEmpty())
            emit callRequested(m_lastCallId);
        return true;
    }
    return QObject::eventFilter(watched, e);
}

} // namespace callscope
