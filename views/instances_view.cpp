#include "views/instances_view.h"

#include "views/palette.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace callscope {

void InstanceTableModel::setStats(std::vector<InstanceStats> stats) {
    // Same instances in the same order: update in place, keeping the selection.
    bool same = stats.size() == m_rows.size();
    for (std::size_t i = 0; same && i < stats.size(); ++i)
        same = stats[i].instance == m_rows[i].instance;
    if (same) {
        m_rows = std::move(stats);
        if (!m_rows.empty())
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_rows = std::move(stats);
    endResetModel();
}

int InstanceTableModel::rowCount(const QModelIndex& p) const {
    return p.isValid() ? 0 : static_cast<int>(m_rows.size());
}
int InstanceTableModel::columnCount(const QModelIndex& p) const {
    return p.isValid() ? 0 : ColumnCount;
}

QVariant InstanceTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const InstanceStats& s = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (index.column()) {
        case Instance:
            return role == SortRole ? qs(s.instance) : shownText(s.instance);
        case Role:
            return s.caller && s.server ? tr("caller, server")
                   : s.server           ? tr("server")
                   : s.caller           ? tr("caller")
                                        : QStringLiteral("\u2014");
        case Calls:
            return s.calls;
        case Retries:
            return s.retries;
        case DuplicateCallers:
            return s.duplicateCallers;
        case Conflicts:
            return s.conflicts;
        case OpenAnomalies:
            return s.anomalies;
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Instance)
        return plainTip(shownText(s.instance) + tr("\nDouble-click: its anomalies"));
    if (role == Qt::TextAlignmentRole && index.column() != Instance && index.column() != Role)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::DecorationRole && index.column() == Instance)
        return instanceColor(qs(s.instance));
    return {};
}

QVariant InstanceTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Instance:
            return tr("An instance: callers from caller events and the attempts' source_instance, "
                      "servers from the receipts' sourceInstance");
        case Role:
            return tr("caller (sends requests), server (answers them), or both");
        case Calls:
            return tr("CallIds this instance acted on");
        case Retries:
            return tr(
                "Sends after the first one (caller events AWAITING_RESPONSE with attempt > 1)");
        case DuplicateCallers:
            return tr("duplicate_caller anomalies naming this instance");
        case Conflicts:
            return tr("digest_conflict anomalies naming this instance");
        case OpenAnomalies:
            return tr("Open anomalies of any kind naming this instance");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Instance:
        return tr("Instance");
    case Role:
        return tr("Role");
    case Calls:
        return tr("Calls");
    case Retries:
        return tr("Retries");
    case DuplicateCallers:
        return tr("Duplicate callers");
    case Conflicts:
        return tr("Digest conflicts");
    case OpenAnomalies:
        return tr("Open anomalies");
    }
    return {};
}

InstancesView::InstancesView(QWidget* parent)
    : QWidget(parent), m_model(new InstanceTableModel(this)), m_table(new QTableView(this)) {
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(InstanceTableModel::SortRole);
    m_table->setModel(proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(InstanceTableModel::OpenAnomalies, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Every column fits at 1024 px; the last one stretches.
    m_table->setColumnWidth(0, 200);
    for (int c = 1; c < InstanceTableModel::ColumnCount - 1; ++c)
        m_table->setColumnWidth(c, c == InstanceTableModel::Role ? 100 : 125);
    m_table->setAlternatingRowColors(true);
    fixSortArrows(m_table->horizontalHeader());
    auto* hint = new QLabel(tr("Callers and servers. Select an instance to filter the anomalies "
                               "to it; double-click to see them."),
                            this);
    hint->setWordWrap(true);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        emit anomaliesRequested(i.siblingAtColumn(0).data(InstanceTableModel::SortRole).toString());
    });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex i = m_table->indexAt(pos);
        if (!i.isValid())
            return;
        const QString name = i.siblingAtColumn(0).data(InstanceTableModel::SortRole).toString();
        auto* menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->addAction(tr("Show its &anomalies"), this,
                        [this, name] { emit anomaliesRequested(name); });
        menu->addAction(tr("&Copy the name"), this,
                        [name] { QApplication::clipboard()->setText(name); });
        menu->popup(m_table->viewport()->mapToGlobal(pos));
    });
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(hint);
    layout->addWidget(m_table, 1);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const auto rows = m_table->selectionModel()->selectedRows();
        // The name as stored (the filter compares it with the anomalies'), not as shown.
        emit instanceSelected(rows.isEmpty()
                                  ? QString()
                                  : rows.front().data(InstanceTableModel::SortRole).toString());
    });
}

void InstancesView::setStats(std::vector<InstanceStats> stats) {
    m_model->setStats(std::move(stats));
}

} // namespace callscope
