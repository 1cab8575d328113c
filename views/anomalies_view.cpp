#include "views/anomalies_view.h"

#include "views/cached_text_delegate.h"
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
#include <QMenu>
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
    m_table->setItemDelegate(new CachedTextDelegate(m_table)); // redrawn at 20 Hz
    connect(model, &AnomalyTableModel::agesMoved, m_table->viewport(),
            qOverload<>(&QWidget::update));
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
    m_table->setTextElideMode(Qt::ElideRight); // every cell's whole text is its tooltip
    fixSortArrows(m_table->horizontalHeader());
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, &AnomaliesView::showContextMenu);
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
    // "Showing N of M" follows the filters and the rows.
    for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(m_filter, signal, this, &AnomaliesView::refreshCounts);
    connect(m_filter, &QAbstractItemModel::modelReset, this, &AnomaliesView::refreshCounts);
    connect(m_filter, &QAbstractItemModel::layoutChanged, this, &AnomaliesView::refreshCounts);
    refreshCounts();
}

QMenu* AnomaliesView::contextMenuFor(const QModelIndex& index) {
    auto* menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (!index.isValid())
        return menu;
    const Anomaly& a = m_model->anomaly(m_filter->mapToSource(index).row());
    const QString callId = a.callIds.empty() ? QString() : qs(a.callIds.front());
    menu->addAction(tr("&Open in the drill-down"), this, [this, callId] { emit openCall(callId); })
        ->setEnabled(!callId.isEmpty());
    QStringList ids;
    for (const auto& id : a.callIds)
        ids << qs(id);
    menu->addAction(
        ids.size() > 1 ? tr("&Copy the %1 callIds").arg(ids.size()) : tr("&Copy callId"), this,
        [ids] { QApplication::clipboard()->setText(ids.join(QLatin1Char('\n'))); });
    menu->addAction(tr("Copy as &JSON"), this,
                    [line = qs(toJsonLine(a))] { QApplication::clipboard()->setText(line); });
    menu->addSeparator();
    menu->addAction(
        tr("Only &kind %1").arg(qs(toString(a.kind))), this,
        [this, kind = qs(toString(a.kind))] { m_kind->setCurrentIndex(m_kind->findData(kind)); });
    for (const auto& inst : a.instances) {
        const QString name = qs(inst);
        // Shown escaped in the menu; the filter gets the raw name.
        // (an & in a name would mark a shortcut key: doubled, it is shown)
        menu->addAction(tr("Only instance %1")
                            .arg(shownText(inst).replace(QLatin1Char('&'), QStringLiteral("&&"))),
                        this, [this, name] { setInstanceFilter(name); });
        if (menu->actions().size() > 12)
            break;
    }
    if (!m_instance->text().isEmpty() || m_kind->currentIndex() > 0)
        menu->addAction(tr("Clear the &filters"), this, [this] {
            m_kind->setCurrentIndex(0);
            m_instance->clear();
        });
    return menu;
}

void AnomaliesView::showContextMenu(const QPoint& pos) {
    contextMenuFor(m_table->indexAt(pos))->popup(m_table->viewport()->mapToGlobal(pos));
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
    const QString shown = tr("Showing %1 of %2").arg(m_filter->rowCount()).arg(m_model->rowCount());
    m_counts->setText(shown + QStringLiteral(" \u2014 ") +
                      (parts.isEmpty() ? tr("no open anomalies")
                                       : tr("open: ") + parts.join(QStringLiteral("   "))));
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
