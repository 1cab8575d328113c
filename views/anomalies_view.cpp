#include "views/anomalies_view.h"

#include "views/palette.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QTableView>
#include <QVBoxLayout>

namespace callscope {

AnomaliesView::AnomaliesView(AnomalyTableModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_filter(new AnomalyFilterModel(this)),
      m_kind(new QComboBox(this)), m_severity(new QComboBox(this)), m_instance(new QLineEdit(this)),
      m_text(new QLineEdit(this)), m_resolved(new QCheckBox(tr("Show resolved"), this)),
      m_counts(new QLabel(this)), m_table(new QTableView(this)) {
    m_filter->setSourceModel(model);
    m_filter->setSortRole(AnomalyTableModel::SortRole);
    m_kind->addItem(tr("All kinds"), QString());
    for (const auto k : kAnomalyKindNames)
        m_kind->addItem(qs(k), qs(k));
    m_severity->addItem(tr("Any severity"), 0);
    m_severity->addItem(tr("Warning and up"), 1);
    m_severity->addItem(tr("Critical only"), 2);
    m_instance->setPlaceholderText(tr("Instance"));
    m_instance->setClearButtonEnabled(true);
    m_text->setPlaceholderText(tr("Filter text (callId, digest, summary)"));
    m_text->setClearButtonEnabled(true);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_kind);
    bar->addWidget(m_severity);
    bar->addWidget(m_instance);
    bar->addWidget(m_text, 1);
    bar->addWidget(m_resolved);

    m_table->setModel(m_filter);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(AnomalyTableModel::Severity, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setColumnWidth(AnomalyTableModel::Kind, 170);
    m_table->setColumnWidth(AnomalyTableModel::Severity, 75);
    m_table->setColumnWidth(AnomalyTableModel::State, 70);
    m_table->setColumnWidth(AnomalyTableModel::CallIds, 260);
    m_table->setColumnWidth(AnomalyTableModel::Instances, 180);
    m_table->setColumnWidth(AnomalyTableModel::Age, 60);
    m_table->setWordWrap(false);
    m_table->installEventFilter(this);
    m_counts->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_counts);
    layout->addWidget(m_table, 1);

    connect(m_kind, &QComboBox::currentIndexChanged, this,
            [this] { m_filter->setKind(m_kind->currentData().toString()); });
    connect(m_severity, &QComboBox::currentIndexChanged, this,
            [this] { m_filter->setMinSeverity(m_severity->currentData().toInt()); });
    connect(m_instance, &QLineEdit::textChanged, m_filter, &AnomalyFilterModel::setInstance);
    connect(m_text, &QLineEdit::textChanged, m_filter, &AnomalyFilterModel::setText);
    connect(m_resolved, &QCheckBox::toggled, m_filter, &AnomalyFilterModel::setShowResolved);
    connect(m_table, &QTableView::doubleClicked, this, [this] { openCurrent(); });
    auto* copy = new QShortcut(QKeySequence::Copy, m_table);
    copy->setContext(Qt::WidgetShortcut);
    connect(copy, &QShortcut::activated, this, &AnomaliesView::copySelection);
    refreshCounts();
}

void AnomaliesView::setInstanceFilter(const QString& instance) {
    m_instance->setText(instance);
}

void AnomaliesView::refreshCounts() {
    QStringList parts;
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i) {
        const int n = m_model->openCount(static_cast<AnomalyKind>(i));
        if (n)
            parts << qs(kAnomalyKindNames[i]) + QStringLiteral(": ") + QString::number(n);
    }
    m_counts->setText(parts.isEmpty() ? tr("No open anomalies")
                                      : tr("Open \u2014 ") + parts.join(QStringLiteral("   ")));
}

bool AnomaliesView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_table && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            openCurrent();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void AnomaliesView::openCurrent() {
    const QModelIndex i = m_table->currentIndex();
    if (i.isValid())
        emit openCall(i.data(AnomalyTableModel::CallIdRole).toString());
}

void AnomaliesView::copySelection() {
    QStringList lines;
    for (const QModelIndex& i : m_table->selectionModel()->selectedRows()) {
        const QModelIndex src = m_filter->mapToSource(i);
        const Anomaly& a = m_model->anomaly(src.row());
        lines << qs(toJsonLine(a));
    }
    QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
}

} // namespace callscope
