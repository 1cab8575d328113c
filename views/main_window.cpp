#include "views/main_window.h"

#include "views/anomalies_view.h"
#include "views/anomaly_table_model.h"
#include "views/drilldown_view.h"
#include "views/instances_view.h"
#include "views/overview_view.h"
#include "views/palette.h"

#include <QCloseEvent>
#include <QFileDialog>
#include <QItemSelectionModel>
#include <QMenu>
#include <QProgressDialog>
#include <QTableView>
#include <QToolButton>
#include <QComboBox>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <QShortcut>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>

namespace callscope {
namespace {

QString dot(bool ok) {
    return QStringLiteral("<span style=\"color:%1\">\u25cf</span>")
        .arg(ok ? QStringLiteral("#2ea04f") : QStringLiteral("#d13b3b"));
}

} // namespace

MainWindow::MainWindow(const QString& sourcesText, QWidget* parent)
    : QMainWindow(parent), m_tabs(new QTabWidget(this)), m_anomalyModel(new AnomalyTableModel(this)),
      m_overview(new OverviewView(this)), m_anomalies(new AnomaliesView(m_anomalyModel, this)),
      m_drilldown(new DrilldownView(this)), m_instances(new InstancesView(this)),
      m_window(new QComboBox(this)), m_search(new QLineEdit(this)), m_postgres(new QLabel(this)),
      m_kafka(new QLabel(this)), m_rejected(new QLabel(this)), m_status(new QLabel(this)),
      m_flushTimer(new QTimer(this)) {
    setWindowTitle(QStringLiteral("callscope \u2014 ") + sourcesText);
    m_tabs->addTab(m_overview, tr("&Overview"));
    m_tabs->addTab(m_anomalies, tr("&Anomalies"));
    m_tabs->addTab(m_drilldown, tr("&Drill-down"));
    m_tabs->addTab(m_instances, tr("&Instances"));
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
    m_search->setMaximumWidth(360);
    bar->addWidget(m_search);
    bar->addSeparator();
    for (QLabel* l : {m_postgres, m_kafka, m_rejected})
        l->setTextFormat(Qt::RichText);
    m_postgres->setText(dot(false) + tr(" PostgreSQL"));
    m_kafka->setText(dot(false) + tr(" Kafka"));
    bar->addWidget(m_postgres);
    bar->addWidget(new QLabel(QStringLiteral("  "), this));
    bar->addWidget(m_kafka);
    bar->addWidget(new QLabel(QStringLiteral("  "), this));
    bar->addWidget(m_rejected);
    statusBar()->addWidget(m_status, 1);

    bar->addSeparator();
    auto* exportButton = new QToolButton(this);
    exportButton->setText(tr("Export report\u2026"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(exportButton);
    exportMenu->addAction(tr("Selected anomalies\u2026"), this, [this] { exportReport(0); });
    exportMenu->addAction(tr("Current drill-down\u2026"), this, [this] { exportReport(1); });
    exportMenu->addAction(tr("Everything in the window\u2026"), this, [this] { exportReport(2); });
    exportButton->setMenu(exportMenu);
    bar->addWidget(exportButton);

    auto* find = new QShortcut(QKeySequence::Find, this);
    connect(find, &QShortcut::activated, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    connect(m_search, &QLineEdit::returnPressed, this, [this] { openCall(m_search->text()); });
    connect(m_anomalies, &AnomaliesView::openCall, this, &MainWindow::openCall);
    connect(m_drilldown, &DrilldownView::callRequested, this, &MainWindow::callRequested);
    connect(m_drilldown, &DrilldownView::cancelRequested, this, &MainWindow::cancelCallRequested);
    connect(m_instances, &InstancesView::instanceSelected, this, [this](const QString& inst) {
        m_anomalies->setInstanceFilter(inst);
        if (!inst.isEmpty())
            statusBar()->showMessage(tr("Anomalies filtered to %1").arg(inst), 4000);
    });
    connect(m_window, &QComboBox::activated, this, [this](int i) {
        qint64 ms = m_window->itemData(i).toLongLong();
        QString label = m_window->itemText(i);
        if (ms < 0) {
            bool ok = false;
            const int minutes = QInputDialog::getInt(this, tr("Custom window"),
                                                     tr("Minutes before now:"), 60, 1, 60 * 24 * 30,
                                                     1, &ok);
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

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_tabs->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 0).toInt());
    if (!settings.contains(QStringLiteral("window/geometry")))
        resize(1400, 900);
}

MainWindow::~MainWindow() = default;

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
    event->accept();
}

void MainWindow::setWindowChoice(const QString& label) {
    const int i = m_window->findText(label);
    if (i >= 0)
        m_window->setCurrentIndex(i);
}

void MainWindow::showTab(Tab tab) { m_tabs->setCurrentIndex(tab); }

void MainWindow::openCall(const QString& query) {
    if (query.trimmed().isEmpty())
        return;
    showTab(DrilldownTab);
    m_drilldown->lookup(query);
}

void MainWindow::takeSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot) {
    m_pending.push_back(std::move(snapshot));
}

void MainWindow::takeCall(std::shared_ptr<const CallDetail> detail) {
    if (detail)
        m_drilldown->showDetail(*detail);
}

void MainWindow::setStatus(const QString& message) { m_status->setText(message); }

void MainWindow::showFatal(const QString& message) {
    m_status->setText(message);
    QMessageBox::critical(this, tr("callscope"), message);
}

void MainWindow::flush() { applyPending(); }

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
            QMessageBox::information(this, tr("Export report"), tr("Select anomalies in the Anomalies tab first."));
            return;
        }
    } else if (scope == 1) {
        if (m_drilldown->currentCallId().isEmpty()) {
            QMessageBox::information(this, tr("Export report"), tr("Open a callId in the drill-down first."));
            return;
        }
        ids << m_drilldown->currentCallId();
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export report"), QStringLiteral("callscope-report.pdf"),
        tr("PDF (*.pdf);;HTML (*.html);;JSON (*.json)"));
    if (path.isEmpty())
        return;
    const bool payloads =
        QMessageBox::question(this, tr("Export report"),
                              tr("Include payloads (result_snapshot)? They are redacted otherwise."),
                              QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    delete m_reportProgress;
    m_reportProgress = new QProgressDialog(tr("Writing the report\u2026"), tr("Cancel"), 0, 0, this);
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
        QMessageBox::warning(this, tr("Export report"), tr("The report was not written: %1").arg(error));
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
    }
    m_anomalyModel->setNow(latest->at);
    const auto& byKind = m_anomalyModel->openByKind();
    const auto& bySeverity = m_anomalyModel->openBySeverity();
    if (m_lastStats && m_lastStats->statsIncluded && m_lastStats->at == latest->at) {
        m_overview->update(*m_lastStats, byKind, bySeverity);
        m_instances->setStats(m_lastStats->instances);
    } else {
        m_overview->update(*latest, byKind, bySeverity);
    }
    updateHealth(*latest);
}

void MainWindow::updateHealth(const DashboardSnapshot& s) {
    for (const SourceStatus& src : s.sources) {
        QLabel* l = src.source == "postgres" ? m_postgres : src.source == "kafka" ? m_kafka : nullptr;
        if (!l)
            continue;
        QString text = dot(src.connected) + (src.source == "postgres" ? tr(" PostgreSQL") : tr(" Kafka"));
        if (src.source == "kafka" && src.connected && src.lag > 0)
            text += tr(" (lag %1)").arg(src.lag);
        l->setText(text);
        l->setToolTip(src.connected ? tr("connected") : qs(src.lastError));
    }
    if (m_lastStats) {
        m_rejected->setText(tr("Rejected: %1").arg(m_lastStats->rejected));
        QStringList tip;
        for (const auto& [reason, n] : m_lastStats->rejectedByReason)
            tip << qs(reason) + QStringLiteral(": ") + QString::number(n);
        for (const auto& x : m_lastStats->rejectedSamples)
            tip << qs(x);
        m_rejected->setToolTip(tip.isEmpty() ? tr("no malformed messages") : tip.join(QLatin1Char('\n')));
    }
}

} // namespace callscope
