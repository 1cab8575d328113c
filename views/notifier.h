#pragma once
// Desktop notifications (issue 14): newly opened critical anomalies, live
// only (never the window's backlog), coalesced over a few seconds into one
// message, through the system tray when there is one and a toast in the
// window's corner otherwise. A kind can be muted (remembered across
// restarts); clicking the message opens the drill-down of its first callId.
#include "models/detection_engine.h"

#include <QFrame>
#include <QObject>
#include <QStringList>

#include <set>
#include <string>
#include <vector>

class QLabel;
class QPushButton;
class QSystemTrayIcon;
class QTimer;

namespace callscope {

class Notifier : public QObject {
    Q_OBJECT
public:
    // `host`: the window the toast lives in (and is raised on a click).
    explicit Notifier(QWidget* host);
    ~Notifier() override;

    // Anomaly changes as the window applies them; `live`: the window has been
    // judged, so an opening is news, not backlog.
    void take(const std::vector<AnomalyChange>& changes, bool live);
    bool muted(AnomalyKind kind) const { return m_muted.count(kind) != 0; }
    void setMuted(AnomalyKind kind, bool muted); // remembered (QSettings)
    bool enabled() const { return m_enabled; }
    void setEnabled(bool enabled); // remembered
    // Shows what is pending now instead of after the coalescing delay.
    void flushNow();
    QFrame* toast() const { return m_toast; }
    QString lastTitle() const { return m_lastTitle; }
    QString lastText() const { return m_lastText; }
    QString lastCallId() const { return m_lastCallId; }

signals:
    void callRequested(const QString& callId);
    void mutedChanged(AnomalyKind kind, bool muted);

private:
    void show();
    void placeToast();
    bool eventFilter(QObject* watched, QEvent* e) override;

    QWidget* m_host;
    QSystemTrayIcon* m_tray = nullptr; // when the desktop has a tray
    QFrame* m_toast;
    QLabel* m_toastTitle;
    QLabel* m_toastText;
    QPushButton* m_mute;
    QTimer* m_coalesce;
    QTimer* m_hide;
    std::vector<Anomaly> m_pending; // opened criticals waiting for the coalescing delay
    std::set<AnomalyKind> m_muted;
    bool m_enabled = true;
    QString m_lastTitle, m_lastText, m_lastCallId;
    AnomalyKind m_lastKind = AnomalyKind::KeyRotation;
};

} // namespace callscope
