#pragma once
// The dashboard's main window: time window, source health, callId search and
// one tab per surface of SPEC §4.1. Snapshots from the model thread arrive at
// any rate; the window applies them at most 20 times a second.
#include "models/dashboard_data.h"
#include "views/clock.h"

#include <QMainWindow>

#include <memory>

class QTabWidget;
class QLabel;
class QLineEdit;
class QComboBox;
class QTimer;
class QProgressDialog;
class QMenu;
class QAction;
class QDialog;

namespace callscope {

class AnomalyTableModel;
class AnomaliesView;
class DrilldownView;
class AdvisorView;
class Notifier;
class InstancesView;
struct Advice;
class OverviewView;
struct DetectionSources;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Tab { OverviewTab, AnomaliesTab, DrilldownTab, InstancesTab, AdvisorTab };
    explicit MainWindow(const QString& sourcesText, QWidget* parent = nullptr);
    ~MainWindow() override;

    void setWindowChoice(const QString& label); // shown in the toolbar
    // A new model thread starts over `windowMs` before now (0 = live): what
    // the previous one found is dropped (its anomalies are numbered afresh),
    // and a relative window slides from now on.
    void restart(qint64 windowMs);
    void showTab(Tab tab);
    void openCall(const QString& query);
    // The sources shown in the title, and the config file they came from ("" for
    // the demo): remembered as the last config and listed under File > Recent.
    void setSources(const QString& sourcesText);
    void setConfigPath(const QString& path);
    // What the deployment reads: tiles of sources not read say so, and the
    // status bar names the detections that are off and why (SPEC §3 "needs").
    void setDeployment(const DetectionSources& sources);
    static QString lastConfigPath();
    QStringList recentCallIds() const;
    // Help > Keyboard shortcuts: every action with its keys, and the views' own keys.
    QDialog* showShortcuts();
    // Saves what the next start restores (also done on close).
    void saveLayout() const;

    OverviewView* overview() const { return m_overview; }
    AnomaliesView* anomalies() const { return m_anomalies; }
    DrilldownView* drilldown() const { return m_drilldown; }
    InstancesView* instances() const { return m_instances; }
    AdvisorView* advisor() const { return m_advisor; }
    Notifier* notifier() const { return m_notifier; }
    AnomalyTableModel* anomalyModel() const { return m_anomalyModel; }
    // Applies what has arrived now (tests and screenshots do not wait for the timer).
    void flush();

public slots:
    void takeSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    void takeCall(std::shared_ptr<const CallDetail> detail);
    void takeAdvice(std::shared_ptr<const Advice> advice);
    void setStatus(const QString& message);
    void showFatal(const QString& message);
    void setZone(DisplayZone zone); // View > Time zone (remembered)

signals:
    void callRequested(const QString& query, quint64 generation);
    void compareRequested(const QString& callId, const QStringList& others, quint64 generation);
    void cancelCallRequested();
    void adviceRequested(double safety); // the Advisor tab: measure the calls held
    void windowRequested(qint64 sinceMs, const QString& label); // ms before now; 0 = live
    void reportRequested(const QStringList& callIds, const QString& path, bool includePayloads);
    void cancelReportRequested();
    void configRequested(const QString& path); // File > Open config or Recent
    void zoneChanged();

public slots:
    void reportProgress(int done, int total);
    void reportFinished(const QString& path, const QString& error);

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void showPlain(int icon, const QString& title, const QString& text);
    void applyPending();
    void exportReport(int scope); // 0 selected anomalies, 1 current drill-down, 2 everything
    void updateHealth(const DashboardSnapshot& s);
    void placeBanner();
    void createMenus();
    void restoreLayout();
    void rememberCall(const QString& callId);
    void rebuildRecentMenus();
    void openConfigDialog();

    QTabWidget* m_tabs;
    AnomalyTableModel* m_anomalyModel;
    OverviewView* m_overview;
    AnomaliesView* m_anomalies;
    DrilldownView* m_drilldown;
    InstancesView* m_instances;
    AdvisorView* m_advisor;
    bool m_adviceAsked = false; // the Advisor tab measured once when first shown
    void measureAdviceOnce();   // when the Advisor is the tab shown and has not measured
    Notifier* m_notifier;
    bool m_judgedSeen = false; // a snapshot said the window is judged: openings are news
    QComboBox* m_window;
    QLineEdit* m_search;
    QLabel* m_postgres;
    QLabel* m_kafka;
    QLabel* m_rejected;
    QLabel* m_status;
    QLabel* m_detectionsOff;
    QLabel* m_banner;     // an outage, over the status bar
    QString m_bannerText; // its whole text
    QTimer* m_flushTimer;
    QProgressDialog* m_reportProgress = nullptr;
    QMenu* m_recentConfigs = nullptr;
    QMenu* m_recentCalls = nullptr;
    QAction* m_openConfig = nullptr;
    QDialog* m_shortcuts = nullptr;
    QString m_configPath;
    std::vector<std::shared_ptr<const DashboardSnapshot>> m_pending;
    std::shared_ptr<const DashboardSnapshot> m_lastStats;
};

} // namespace callscope
