#include "views/main_window.h"

#include "models/detection_engine.h"
#include "views/advisor_view.h"
#include "views/anomalies_view.h"
#include "views/anomaly_table_model.h"
#include "views/clock.h"
#include "views/drilldown_view.h"
#include "views/instances_view.h"
#include "views/notifier.h"
#include "views/overview_view.h"
#include "views/palette.h"
#include "views/report_renderer.h"
#include "views/theme.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressDialog>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace callscope {
namespace {

// Green up, red down, grey not part of this deployment.
QString dot(bool ok, bool configured = true) {
    return QStringLiteral("<span style=\"color:%1\">\u25cf</span>")
        .arg(!configured ? QStringLiteral("#8a8f98")
             : ok        ? QStringLiteral("#2ea04f")
                         : QStringLiteral("#d13b3b"));
}

// Each state its colour: green live, amber lagging or quiet, blue on its
// way, red down, grey not read.
QString stateDot(SourceState state) {
    const char* colour = "#8a8f98";
    switch (state) {
    case SourceState::Live:
        colour = "#2ea04f";
        break;
    case SourceState::Lagging:
    case SourceState::Quiet:
        colour = "#e08a1e";
        break;
    case SourceState::Connecting:
    case SourceState::Loading:
        colour = "#3d8ed9";
        break;
    case SourceState::Down:
        colour = "#d13b3b";
        break;
    case SourceState::NotRead:
        break;
    }
    return QStringLiteral("<span style=\"color:%1\">\u25cf</span>").arg(QLatin1String(colour));
}

QString sourceName(const std::string& source) {
    return source == "postgres" ? QStringLiteral("PostgreSQL") : QStringLiteral("Kafka");
}

QString ago(EpochMillis t, EpochMillis now) {
    return t == kNoTime ? QStringLiteral("never")
                        : QStringLiteral("%1 ago (%2)")
                              .arg(humanDuration(now - t), displayDateTime(t, TimeDetail::Seconds) +
                                                               QLatin1Char(' ') + zoneLabel(t));
}

const QString kZoneKey = QStringLiteral("view/zone");

} // namespace

MainWindow::MainWindow(const QString& sourcesText, QWidget* parent)
    : QMainWindow(parent), m_tabs(new QTabWidget(this)),
      m_anomalyModel(new AnomalyTableModel(this)), m_overview(new OverviewView(this)),
      m_anomalies(new AnomaliesView(m_anomalyModel, this)), m_drilldown(new DrilldownView(this)),
      m_instances(new InstancesView(this)), m_advisor(new AdvisorView(this)),
      m_notifier(new Notifier(this)), m_window(new QComboBox(this)), m_search(new QLineEdit(this)),
      m_postgres(new QLabel(this)), m_kafka(new QLabel(this)), m_rejected(new QLabel(this)),
      m_status(new QLabel(this)), m_detectionsOff(new QLabel(this)),
      m_flushTimer(new QTimer(this)) {
    setSources(sourcesText);
    m_tabs->addTab(m_overview, tr("&Overview"));
    m_tabs->addTab(m_anomalies, tr("&Anomalies"));
    m_tabs->addTab(m_drilldown, tr("&Drill-down"));
    m_tabs->addTab(m_instances, tr("&Instances"));
    m_tabs->addTab(m_advisor, tr("Ad&visor"));
    setCentralWidget(m_tabs);

    auto* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolbar"));
    bar->setMovable(false);
    bar->addWidget(new QLabel(tr(" Window: "), this));
    m_window->addItem(tr("Live"), 0);
    m_window->addItem(tr("Last 15 min"), 15 * 60'000);
    m_window->addItem(tr("Last 1 h"), 3'600'000);
    m_window->addItem(tr("Last 24 h"), 86'400'000);
    m_window->addItem(tr("Custom\u2026"), -1);
    bar->addWidget(m_window);
    bar->addSeparator();
    m_search->setPlaceholderText(tr("callId or bizNo  (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(300);
    m_search->setMinimumWidth(160);
    bar->addWidget(m_search);
    bar->addSeparator();
    for (QLabel* l : {m_postgres, m_kafka, m_rejected})
        l->setTextFormat(Qt::RichText);
    m_postgres->setText(dot(false) + tr(" PostgreSQL"));
    m_kafka->setText(dot(false) + tr(" Kafka"));
    bar->addWidget(m_postgres);
    bar->addWidget(new QLabel(QStringLiteral("  "), this));
    bar->addWidget(m_kafka);
    m_status->setTextFormat(Qt::PlainText); // server errors quote data
    // One line that never widens the window: long text is cut, whole in the tooltip.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    statusBar()->addWidget(m_status, 1);
    // Outages in a banner over the status bar: it appears at once and moves
    // nothing (no layout makes room for it).
    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("outageBanner"));
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setAutoFillBackground(true);
    m_banner->setStyleSheet(QStringLiteral(
        "QLabel#outageBanner { background: #b42318; color: white; padding: 4px 8px; }"));
    m_banner->hide();
    {
        DisplayZone zone = DisplayZone::Utc;
        parseZoneKey(QSettings().value(kZoneKey).toString(), zone);
        setDisplayZone(zone);
    }
    m_detectionsOff->setTextFormat(Qt::PlainText);
    m_detectionsOff->setObjectName(QStringLiteral("detectionsOff"));
    m_detectionsOff->hide();
    statusBar()->addPermanentWidget(m_detectionsOff);
    statusBar()->addPermanentWidget(m_rejected); // what was lost on the way in

    createMenus();
    bar->addSeparator();
    auto* exportButton = new QToolButton(this);
    exportButton->setText(tr("Export report\u2026"));
    exportButton->setToolTip(tr("Write an incident report (PDF, HTML or JSON)"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    exportButton->setMenu(findChild<QMenu*>(QStringLiteral("exportMenu")));
    bar->addWidget(exportButton);
    m_window->setToolTip(tr("The time window loaded and judged (View > Time window)"));
    m_search->setToolTip(tr("Open a callId or bizNo in the drill-down (Ctrl+F, then Enter)"));
    m_rejected->setToolTip(tr("no malformed messages"));

    connect(m_search, &QLineEdit::returnPressed, this, [this] { openCall(m_search->text()); });
    connect(m_anomalies, &AnomaliesView::openCall, this, &MainWindow::openCall);
    connect(m_drilldown, &DrilldownView::callRequested, this, &MainWindow::callRequested);
    connect(m_drilldown, &DrilldownView::compareRequested, this, &MainWindow::compareRequested);
    connect(m_drilldown, &DrilldownView::cancelRequested, this, &MainWindow::cancelCallRequested);
    connect(m_drilldown, &DrilldownView::callShown, this, &MainWindow::rememberCall);
    connect(m_instances, &InstancesView::instanceSelected, this, [this](const QString& inst) {
        m_anomalies->setInstanceFilter(inst);
        if (!inst.isEmpty())
            statusBar()->showMessage(tr("Anomalies filtered to %1").arg(inst), 4000);
    });
    // The advisor measures when asked, and the first time it is shown.
    connect(m_advisor, &AdvisorView::adviceRequested, this, &MainWindow::adviceRequested);
    connect(m_advisor, &AdvisorView::callRequested, this, &MainWindow::openCall);
    connect(m_notifier, &Notifier::callRequested, this, &MainWindow::openCall);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::measureAdviceOnce);
    connect(m_instances, &InstancesView::anomaliesRequested, this, [this](const QString& inst) {
        m_anomalies->setInstanceFilter(inst);
        showTab(AnomaliesTab);
    });
    connect(m_window, &QComboBox::activated, this, [this](int i) {
        qint64 ms = m_window->itemData(i).toLongLong();
        QString label = m_window->itemText(i);
        if (ms < 0) {
            bool ok = false;
            const int minutes = QInputDialog::getInt(
                this, tr("Custom window"), tr("Minutes before now:"), 60, 1, 60 * 24 * 30, 1, &ok);
            if (!ok)
                return;
            ms = qint64(minutes) * 60'000;
            label = tr("Last %1 min").arg(minutes);
        }
        emit windowRequested(ms, label);
    });

    m_flushTimer->setInterval(50); // at most 20 updates a second
    connect(m_flushTimer, &QTimer::timeout, this, &MainWindow::applyPending);
    m_flushTimer->start();

    restoreLayout();
}

MainWindow::~MainWindow() = default;

void MainWindow::closeEvent(QCloseEvent* event) {
    saveLayout();
    event->accept();
}

// Keys of what the next start restores.
namespace {
const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kTab = QStringLiteral("window/tab");
const QString kSplitter = QStringLiteral("drilldown/splitter");
const QString kAnomalyHeader = QStringLiteral("anomalies/header");
const QString kInstanceHeader = QStringLiteral("instances/header-lanes"); // 8 columns
const QString kLastConfig = QStringLiteral("config/last");
const QString kRecentConfigs = QStringLiteral("config/recent");
const QString kRecentCalls = QStringLiteral("drilldown/recent");
constexpr int kRecentMax = 10;

// Puts `item` first in the remembered list `key`, without duplicates.
QStringList pushRecent(const QString& key, const QString& item) {
    QSettings settings;
    QStringList list = settings.value(key).toStringList();
    list.removeAll(item);
    list.prepend(item);
    while (list.size() > kRecentMax)
        list.removeLast();
    settings.setValue(key, list);
    return list;
}

// Restores a table header's widths and sort, and sorts the view the same way.
void restoreHeader(QTableView* table, const QByteArray& state) {
    if (state.isEmpty() || !table->horizontalHeader()->restoreState(state))
        return;
    const QHeaderView* h = table->horizontalHeader();
    table->sortByColumn(h->sortIndicatorSection(), h->sortIndicatorOrder());
}
} // namespace

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.setValue(kGeometry, saveGeometry());
    settings.setValue(kState, saveState());
    settings.setValue(kTab, m_tabs->currentIndex());
    settings.setValue(kSplitter, m_drilldown->splitter()->saveState());
    settings.setValue(kAnomalyHeader, m_anomalies->table()->horizontalHeader()->saveState());
    settings.setValue(kInstanceHeader, m_instances->table()->horizontalHeader()->saveState());
}

void MainWindow::restoreLayout() {
    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometry).toByteArray()))
        resize(1400, 900);
    restoreState(settings.value(kState).toByteArray());
    m_tabs->setCurrentIndex(settings.value(kTab, 0).toInt());
    m_drilldown->splitter()->restoreState(settings.value(kSplitter).toByteArray());
    restoreHeader(m_anomalies->table(), settings.value(kAnomalyHeader).toByteArray());
    restoreHeader(m_instances->table(), settings.value(kInstanceHeader).toByteArray());
    rebuildRecentMenus();
}

QString MainWindow::lastConfigPath() {
    return QSettings().value(kLastConfig).toString();
}

QStringList MainWindow::recentCallIds() const {
    return QSettings().value(kRecentCalls).toStringList();
}

void MainWindow::setSources(const QString& sourcesText) {
    // The title bar is plain text: one line, with control characters shown.
    QString title = sourcesText;
    title.replace(QLatin1Char('\n'), QLatin1Char(' '));
    title = shownText(title.toStdString());
    setWindowTitle(QStringLiteral("callscope \u2014 ") + title);
}

void MainWindow::setDeployment(const DetectionSources& sources) {
    m_overview->setNotRead(sources.records, sources.attempts && sources.records, sources.receipts);
    const auto off = detectionsOff(sources);
    m_detectionsOff->setVisible(!off.empty());
    // A fact about the configuration, not an alarm: plain text, the reasons on hover.
    m_detectionsOff->setText(off.size() == 1 ? tr("1 detection off")
                                             : tr("%1 detections off").arg(off.size()));
    QStringList tip{tr("Not judged: their inputs are not read by this configuration")};
    for (const auto& [kind, why] : off)
        tip << QStringLiteral("%1: %2").arg(
            QString::fromUtf8(toString(kind).data(), toString(kind).size()),
            QString::fromStdString(why));
    m_detectionsOff->setToolTip(plainTip(tip.join(QLatin1Char('\n'))));
}

void MainWindow::setConfigPath(const QString& path) {
    m_configPath = path;
    m_openConfig->setEnabled(!path.isEmpty());
    if (path.isEmpty())
        return;
    QSettings().setValue(kLastConfig, path);
    pushRecent(kRecentConfigs, path);
    rebuildRecentMenus();
}

void MainWindow::rememberCall(const QString& callId) {
    if (callId.isEmpty())
        return;
    pushRecent(kRecentCalls, callId);
    rebuildRecentMenus();
}

void MainWindow::openConfigDialog() {
    const QString start = m_configPath.isEmpty() ? QDir::homePath() : m_configPath;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a callscope config"), start, tr("callscope config (*.toml);;All files (*)"));
    if (!path.isEmpty())
        emit configRequested(path);
}

void MainWindow::rebuildRecentMenus() {
    QSettings settings;
    m_recentConfigs->clear();
    const QStringList configs = settings.value(kRecentConfigs).toStringList();
    for (int i = 0; i < configs.size(); ++i) {
        // Paths are data: no mnemonic from them, the number is the mnemonic.
        QString label = configs[i];
        label.replace(QLatin1Char('&'), QStringLiteral("&&"));
        auto* a = m_recentConfigs->addAction(QStringLiteral("&%1  %2").arg(i + 1).arg(label));
        const QString path = configs[i];
        a->setEnabled(!m_configPath.isEmpty());
        connect(a, &QAction::triggered, this, [this, path] { emit configRequested(path); });
    }
    m_recentConfigs->setEnabled(!configs.isEmpty());

    m_recentCalls->clear();
    const QStringList calls = settings.value(kRecentCalls).toStringList();
    for (int i = 0; i < calls.size(); ++i) {
        QString label = shownText(calls[i].toStdString()); // data: escapes shown
        label.replace(QLatin1Char('&'), QStringLiteral("&&"));
        if (label.size() > 80) // callIds are data of any length
            label = label.left(79) + QStringLiteral("\u2026");
        auto* a = m_recentCalls->addAction(QStringLiteral("&%1  %2").arg((i + 1) % 10).arg(label));
        const QString id = calls[i];
        connect(a, &QAction::triggered, this, [this, id] { openCall(id); });
    }
    if (!calls.isEmpty()) {
        m_recentCalls->addSeparator();
        m_recentCalls->addAction(tr("&Clear the list"), this, [this] {
            QSettings().remove(kRecentCalls);
            rebuildRecentMenus();
        });
    }
    m_recentCalls->setEnabled(!calls.isEmpty());
}

void MainWindow::createMenus() {
    // File
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openConfig = file->addAction(tr("&Open config\u2026"), this, &MainWindow::openConfigDialog);
    m_openConfig->setShortcut(QKeySequence::Open);
    m_openConfig->setEnabled(false); // until a config file is in use (not in the demo)
    m_recentConfigs = file->addMenu(tr("&Recent configs"));
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export report"));
    exportMenu->setObjectName(QStringLiteral("exportMenu"));
    exportMenu->addAction(tr("&Selected anomalies\u2026"), this, [this] { exportReport(0); })
        ->setShortcut(QKeySequence(tr("Ctrl+E")));
    exportMenu->addAction(tr("Current &drill-down\u2026"), this, [this] { exportReport(1); })
        ->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    exportMenu->addAction(tr("&Everything in the window\u2026"), this, [this] { exportReport(2); });
    file->addSeparator();
    // Some platforms bind no key to the standard Quit: Ctrl+Q everywhere then.
    QList<QKeySequence> quitKeys = QKeySequence::keyBindings(QKeySequence::Quit);
    if (quitKeys.isEmpty())
        quitKeys = {QKeySequence(tr("Ctrl+Q"))};
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcuts(quitKeys);

    // View
    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QString tabNames[] = {tr("&Overview"), tr("&Anomalies"), tr("&Drill-down"),
                                tr("&Instances"), tr("Ad&visor")};
    for (int t = 0; t < 5; ++t)
        view->addAction(tabNames[t], this, [this, t] { showTab(static_cast<Tab>(t)); })
            ->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + t)));
    view->addSeparator();
    QMenu* notifications = view->addMenu(tr("&Notifications"));
    QAction* notifyAll = notifications->addAction(tr("Notify about new &critical anomalies"));
    notifyAll->setCheckable(true);
    notifyAll->setChecked(m_notifier->enabled());
    connect(notifyAll, &QAction::toggled, m_notifier, &Notifier::setEnabled);
    notifications->addSeparator();
    for (std::size_t k = 0; k < kAnomalyKindNames.size(); ++k) {
        const auto kind = static_cast<AnomalyKind>(k);
        QAction* a = notifications->addAction(qs(kAnomalyKindNames[k]));
        a->setCheckable(true);
        a->setChecked(!m_notifier->muted(kind));
        connect(a, &QAction::toggled, m_notifier,
                [this, kind](bool on) { m_notifier->setMuted(kind, !on); });
        connect(m_notifier, &Notifier::mutedChanged, a, [a, kind](AnomalyKind changed, bool m) {
            if (changed == kind)
                a->setChecked(!m);
        });
    }
    QMenu* windowMenu = view->addMenu(tr("Time &window"));
    for (int i = 0; i < m_window->count(); ++i)
        windowMenu->addAction(m_window->itemText(i), this, [this, i] {
            m_window->setCurrentIndex(i);
            emit m_window->activated(i);
        });
    QMenu* themeMenu = view->addMenu(tr("&Theme"));
    auto* themes = new QActionGroup(this);
    const std::pair<Theme, QString> themeNames[] = {
        {Theme::System, tr("&System")}, {Theme::Light, tr("&Light")}, {Theme::Dark, tr("&Dark")}};
    for (const auto& [theme, label] : themeNames) {
        QAction* a = themeMenu->addAction(label, this, [t = theme] { applyTheme(t); });
        a->setCheckable(true);
        a->setChecked(currentTheme() == theme);
        themes->addAction(a);
    }
    QMenu* zoneMenu = view->addMenu(tr("Time &zone"));
    auto* zones = new QActionGroup(this);
    for (const auto& [zone, label] :
         {std::pair{DisplayZone::Utc, tr("&UTC")}, std::pair{DisplayZone::Local, tr("&Local")}}) {
        QAction* a = zoneMenu->addAction(label, this, [this, z = zone] { setZone(z); });
        a->setCheckable(true);
        a->setChecked(displayZone() == zone);
        a->setObjectName(QStringLiteral("zone-") + zoneKey(zone));
        zones->addAction(a);
    }
    view->addSeparator();
    QAction* full = view->addAction(
        tr("&Full screen"), this, [this] { setWindowState(windowState() ^ Qt::WindowFullScreen); });
    full->setShortcut(QKeySequence::FullScreen);

    // Go
    QMenu* go = menuBar()->addMenu(tr("&Go"));
    go->addAction(tr("&Find callId or bizNo"), this, [this] {
          m_search->setFocus();
          m_search->selectAll();
      })->setShortcut(QKeySequence::Find);
    // Back and forward across the drill-downs: the window's actions hold the
    // keys (the view's own shortcuts would make them ambiguous).
    m_drilldown->setHistoryShortcutsEnabled(false);
    QAction* back = go->addAction(tr("&Back"), this, [this] {
        showTab(DrilldownTab);
        m_drilldown->back();
    });
    back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    QAction* forward = go->addAction(tr("F&orward"), this, [this] {
        showTab(DrilldownTab);
        m_drilldown->forward();
    });
    forward->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    const auto history = [this, back, forward] {
        back->setEnabled(m_drilldown->canGoBack());
        forward->setEnabled(m_drilldown->canGoForward());
    };
    connect(m_drilldown, &DrilldownView::historyChanged, this, history);
    history();
    m_recentCalls = go->addMenu(tr("&Recent callIds"));

    // Help
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), this, &MainWindow::showShortcuts)
        ->setShortcuts({QKeySequence::HelpContents, QKeySequence(tr("Ctrl+/"))});
    help->addAction(tr("&About callscope"), this, [this] {
        QMessageBox::about(this, tr("About callscope"),
                           tr("<b>callscope %1</b><p>Watches retried calls guarded by a callId, "
                              "a server idempotency record and business receipts.</p>")
                               .arg(QApplication::applicationVersion().toHtmlEscaped()));
    });
}

QDialog* MainWindow::showShortcuts() {
    if (!m_shortcuts) {
        m_shortcuts = new QDialog(this);
        m_shortcuts->setObjectName(QStringLiteral("shortcutsDialog"));
        m_shortcuts->setWindowTitle(tr("Keyboard shortcuts"));
        auto* table = new QTableWidget(m_shortcuts);
        table->setColumnCount(2);
        table->setHorizontalHeaderLabels({tr("Keys"), tr("Action")});
        table->verticalHeader()->hide();
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->setSelectionBehavior(QAbstractItemView::SelectRows);
        table->horizontalHeader()->setStretchLastSection(true);
        const auto addRow = [table](const QString& keys, const QString& what) {
            const int r = table->rowCount();
            table->insertRow(r);
            table->setItem(r, 0, new QTableWidgetItem(keys));
            table->setItem(r, 1, new QTableWidgetItem(what));
        };
        // Every menu action with keys, read from the menus so the list cannot drift.
        const std::function<void(QMenu*, const QString&)> walk = [&](QMenu* menu,
                                                                     const QString& path) {
            for (QAction* a : menu->actions()) {
                const QString name =
                    path + QStringLiteral(" \u203a ") + QString(a->text()).remove(QLatin1Char('&'));
                if (a->menu())
                    walk(a->menu(), name);
                else if (!a->shortcuts().isEmpty()) {
                    QStringList keys;
                    for (const QKeySequence& k : a->shortcuts())
                        keys << k.toString(QKeySequence::NativeText);
                    addRow(keys.join(QStringLiteral(", ")), name);
                }
            }
        };
        for (QAction* top : menuBar()->actions())
            if (top->menu())
                walk(top->menu(), QString(top->text()).remove(QLatin1Char('&')));
        // Keys the views handle themselves.
        addRow(tr("Alt+letter"), tr("Open a menu or a tab by its underlined letter"));
        addRow(tr("Enter"), tr("Anomalies: open the selected anomaly's callId in the drill-down"));
        addRow(QKeySequence(QKeySequence::Copy).toString(QKeySequence::NativeText),
               tr("Anomalies: copy the selected rows"));
        addRow(tr("+  /  \u2212"), tr("Timeline: zoom in / out (or the mouse wheel)"));
        addRow(tr("\u2190  /  \u2192"), tr("Timeline: pan (or drag)"));
        addRow(tr("0"), tr("Timeline: fit the whole call (or double-click)"));
        addRow(tr("Tab  /  Shift+Tab"), tr("Move between the controls of a view"));
        table->resizeColumnsToContents();
        auto* close = new QDialogButtonBox(QDialogButtonBox::Close, m_shortcuts);
        connect(close, &QDialogButtonBox::rejected, m_shortcuts, &QDialog::close);
        auto* layout = new QVBoxLayout(m_shortcuts);
        layout->addWidget(table);
        layout->addWidget(close);
        // Tall enough to show every row without scrolling, where the screen allows.
        const int rowsHeight = table->verticalHeader()->length() +
                               table->horizontalHeader()->height() + 2 * table->frameWidth();
        const QRect screen =
            this->screen() ? this->screen()->availableGeometry() : QRect(0, 0, 1280, 800);
        m_shortcuts->resize(
            qMin(screen.width(), qMax(640, table->horizontalHeader()->length() + 40)),
            qMin(screen.height() - 80, rowsHeight + close->sizeHint().height() + 40));
    }
    m_shortcuts->show();
    m_shortcuts->raise();
    m_shortcuts->activateWindow();
    return m_shortcuts;
}

void MainWindow::restart(qint64 windowMs) {
    m_pending.clear();
    m_judgedSeen = false;
    m_adviceAsked = false; // another window: measured again when the tab is shown
    m_lastStats.reset();
    m_anomalyModel->clear();
    m_anomalyModel->setWindow(windowMs);
    m_anomalies->refreshCounts();
}

void MainWindow::setWindowChoice(const QString& label) {
    const int i = m_window->findText(label);
    if (i >= 0)
        m_window->setCurrentIndex(i);
}

void MainWindow::showTab(Tab tab) {
    m_tabs->setCurrentIndex(tab);
}

void MainWindow::openCall(const QString& query) {
    if (query.trimmed().isEmpty())
        return;
    showTab(DrilldownTab);
    m_drilldown->lookup(query);
}

void MainWindow::takeSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot) {
    m_pending.push_back(std::move(snapshot));
}

void MainWindow::measureAdviceOnce() {
    // Not before a snapshot has come: until then nobody would answer.
    if (m_tabs->currentIndex() == AdvisorTab && !m_adviceAsked && m_lastStats) {
        m_adviceAsked = true;
        emit adviceRequested(2.0);
    }
}

void MainWindow::takeAdvice(std::shared_ptr<const Advice> advice) {
    m_advisor->setAdvice(std::move(advice));
}

void MainWindow::takeCall(std::shared_ptr<const CallDetail> detail) {
    if (detail)
        m_drilldown->showDetail(*detail);
}

void MainWindow::setStatus(const QString& message) {
    QString line = message;
    line.replace(QLatin1Char('\n'), QLatin1Char(' '));
    m_status->setText(shownText(line.toStdString()));
    m_status->setToolTip(plainTip(m_status->text()));
}

void MainWindow::setZone(DisplayZone zone) {
    setDisplayZone(zone);
    QSettings().setValue(kZoneKey, zoneKey(zone));
    for (QAction* a : findChildren<QAction*>())
        if (a->objectName().startsWith(QLatin1String("zone-")))
            a->setChecked(a->objectName() == QStringLiteral("zone-") + zoneKey(zone));
    m_anomalyModel->setNow(nowMillis());         // times in the table are redrawn
    if (!m_drilldown->currentCallId().isEmpty()) // drawn again in the new zone
        m_drilldown->lookup(m_drilldown->currentCallId());
    emit zoneChanged();
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    placeBanner();
}

void MainWindow::placeBanner() {
    // Over the status bar, whose height is always there: nothing moves.
    const QRect area = statusBar()->geometry();
    const int h = std::max(area.height(), m_banner->sizeHint().height());
    m_banner->setGeometry(area.left(), area.bottom() - h + 1, area.width(), h);
    // The text is one line, cut to the width; the whole of it is the tooltip.
    m_banner->setText(
        m_banner->fontMetrics().elidedText(m_bannerText, Qt::ElideRight, area.width() - 24));
    m_banner->raise();
}

void MainWindow::showFatal(const QString& message) {
    setStatus(message);
    showPlain(QMessageBox::Critical, tr("callscope"), shownText(message.toStdString()));
}

// Server errors quote data: a message box shows them as plain text.
void MainWindow::showPlain(int icon, const QString& title, const QString& text) {
    QMessageBox box(static_cast<QMessageBox::Icon>(icon), title, text, QMessageBox::Ok, this);
    box.setTextFormat(Qt::PlainText);
    box.exec();
}

void MainWindow::flush() {
    applyPending();
}

void MainWindow::exportReport(int scope) {
    QStringList ids;
    if (scope == 0) {
        auto* table = m_anomalies->table();
        for (const QModelIndex& i : table->selectionModel()->selectedRows()) {
            const Anomaly& a = m_anomalyModel->anomaly(m_anomalies->filter()->mapToSource(i).row());
            for (const auto& id : a.callIds)
                if (!ids.contains(qs(id)))
                    ids << qs(id);
        }
        if (ids.isEmpty()) {
            QMessageBox::information(this, tr("Export report"),
                                     tr("Select anomalies in the Anomalies tab first."));
            return;
        }
    } else if (scope == 1) {
        if (m_drilldown->currentCallId().isEmpty()) {
            QMessageBox::information(this, tr("Export report"),
                                     tr("Open a callId in the drill-down first."));
            return;
        }
        ids << m_drilldown->currentCallId();
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export report"),
        defaultReportName(scope == 1 ? ids.front()
                          : scope == 0
                              ? (ids.size() == 1 ? ids.front() : QStringLiteral("anomalies"))
                              : QStringLiteral("window"),
                          nowMillis(), QStringLiteral("pdf")),
        tr("PDF (*.pdf);;HTML (*.html);;JSON (*.json)"));
    if (path.isEmpty())
        return;
    const bool payloads =
        QMessageBox::question(
            this, tr("Export report"),
            tr("Include payloads (result_snapshot)? They are redacted otherwise."),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    delete m_reportProgress;
    m_reportProgress =
        new QProgressDialog(tr("Writing the report\u2026"), tr("Cancel"), 0, 0, this);
    m_reportProgress->setWindowModality(Qt::WindowModal);
    m_reportProgress->setMinimumDuration(300);
    connect(m_reportProgress, &QProgressDialog::canceled, this, &MainWindow::cancelReportRequested);
    emit reportRequested(ids, path, payloads);
}

void MainWindow::reportProgress(int done, int total) {
    if (!m_reportProgress)
        return;
    m_reportProgress->setMaximum(total);
    m_reportProgress->setValue(done);
}

void MainWindow::reportFinished(const QString& path, const QString& error) {
    if (m_reportProgress) {
        m_reportProgress->reset();
        m_reportProgress->deleteLater();
        m_reportProgress = nullptr;
    }
    if (error.isEmpty())
        statusBar()->showMessage(tr("Report written to %1").arg(path), 8000);
    else
        showPlain(QMessageBox::Warning, tr("Export report"),
                  tr("The report was not written: %1").arg(shownText(error.toStdString())));
}

void MainWindow::applyPending() {
    if (m_pending.empty())
        return;
    // Every change of every snapshot, in one model update.
    std::vector<AnomalyChange> changes;
    for (const auto& s : m_pending) {
        changes.insert(changes.end(), s->changes.begin(), s->changes.end());
        if (s->statsIncluded)
            m_lastStats = s;
    }
    const auto latest = m_pending.back();
    m_pending.clear();
    if (!changes.empty()) {
        m_anomalyModel->applyChanges(changes);
        m_anomalies->refreshCounts();
        m_notifier->take(changes, m_judgedSeen);
    }
    m_judgedSeen = m_judgedSeen || latest->windowJudged;
    measureAdviceOnce(); // the tab may have been open before anything could answer
    m_anomalyModel->setNow(latest->at);
    const auto& byKind = m_anomalyModel->openByKind();
    const auto& bySeverity = m_anomalyModel->openBySeverity();
    if (m_lastStats && m_lastStats->statsIncluded && m_lastStats->at == latest->at) {
        m_overview->update(*m_lastStats, byKind, bySeverity);
        m_instances->setStats(m_lastStats->instances, m_lastStats->laneFrom, m_lastStats->laneTo);
    } else {
        m_overview->update(*latest, byKind, bySeverity);
    }
    updateHealth(*latest);
}

void MainWindow::updateHealth(const DashboardSnapshot& s) {
    QStringList outages;
    for (const SourceHealth& src : s.sources) {
        QLabel* l = src.source == "postgres" ? m_postgres
                    : src.source == "kafka"  ? m_kafka
                                             : nullptr;
        if (!l)
            continue;
        const EpochMillis now = s.at;
        // The state in a word next to the name; the tooltip has the rest.
        QString word = qs(toString(src.state));
        if (src.state == SourceState::Loading && src.loadPercent >= 0)
            word += QStringLiteral(" %1%").arg(src.loadPercent);
        if (src.state == SourceState::Lagging && src.readTo != kNoTime)
            word += QLatin1Char(' ') + humanDuration(now - src.readTo);
        l->setText(stateDot(src.state) + QLatin1Char(' ') + sourceName(src.source) +
                   QStringLiteral(" <small>") + word.toHtmlEscaped() + QStringLiteral("</small>"));
        QStringList tip;
        tip << tr("%1: %2 since %3").arg(sourceName(src.source), word, ago(src.since, now));
        if (src.configured && src.state != SourceState::NotRead) {
            tip << tr("last new data: %1").arg(ago(src.lastDataAt, now));
            if (src.readTo != kNoTime)
                tip << tr("read up to: %1").arg(ago(src.readTo, now));
            if (src.source == "kafka" && src.lag > 0)
                tip << tr("lag: %1 messages").arg(src.lag);
            if (src.state == SourceState::Quiet)
                tip << tr("quiet: nothing new for longer than quiet_after; the source answers, "
                          "but the system may have stopped writing");
            if (!src.lastError.empty())
                tip << tr("last error (%1): %2")
                           .arg(ago(src.lastErrorAt, now), shownText(src.lastError));
        }
        for (const QString& line : qs(src.note).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            tip << shownText(line.toStdString()); // our lines; data in them escaped
        l->setToolTip(plainTip(tip.join(QLatin1Char('\n'))));
        if (src.state == SourceState::Down)
            outages << tr("%1 is down since %2 %3: %4 \u2014 retrying")
                           .arg(sourceName(src.source),
                                displayTimeOfDay(src.since, TimeDetail::Seconds),
                                zoneLabel(src.since), shownText(src.lastError));
    }
    QString banner = outages.join(QStringLiteral("  \u2022  "));
    if (!banner.isEmpty() && outages.size() < 2)
        banner += tr(". What the other source reads is shown; figures that need this one are "
                     "marked stale.");
    if (banner != m_bannerText) {
        m_bannerText = banner;
        m_banner->setToolTip(plainTip(banner));
        m_banner->setVisible(!banner.isEmpty());
        placeBanner();
    }
    if (m_lastStats) {
        std::int64_t lost = 0;
        for (const auto& [where, n] : m_lastStats->lostByPartition)
            lost += n;
        QString text = tr("Rejected: %1").arg(m_lastStats->rejected);
        if (lost > 0)
            text += tr("  Lost: %1").arg(lost);
        if (m_lastStats->evictedOverBudget > 0)
            text += tr("  Evicted: %1").arg(m_lastStats->evictedOverBudget);
        if (m_lastStats->forgottenAnomalies > 0)
            text += tr("  Forgotten: %1").arg(m_lastStats->forgottenAnomalies);
        m_rejected->setText(text);
        QStringList tip;
        for (const auto& [reason, n] : m_lastStats->rejectedByReason)
            tip << shownText(reason) + QStringLiteral(": ") + QString::number(n);
        for (const auto& x : m_lastStats->rejectedSamples)
            tip << shownText(x);
        for (const auto& [where, n] : m_lastStats->lostByPartition)
            tip << tr("%1: %2 messages deleted by retention before they were read")
                       .arg(shownText(where))
                       .arg(n);
        if (m_lastStats->evictedOverBudget > 0)
            tip << tr("%1 calls left memory early: the store reached its budget of %2 MiB "
                      "([store] max_bytes); it holds %3 MiB")
                       .arg(m_lastStats->evictedOverBudget)
                       .arg(m_lastStats->storeBudget >> 20)
                       .arg(m_lastStats->storeBytes >> 20);
        if (m_lastStats->forgottenAnomalies > 0)
            tip << tr("%1 oldest anomalies were forgotten with their calls: nothing else "
                      "was left to evict within the memory budget")
                       .arg(m_lastStats->forgottenAnomalies);
        m_rejected->setToolTip(tip.isEmpty() ? tr("no malformed messages")
                                             : plainTip(tip.join(QLatin1Char('\n'))));
    }
}

} // namespace callscope
