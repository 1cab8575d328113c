#include "views/instances_view.h"

#include "views/palette.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
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
    if (role == Qt::TextAlignmentRole && index.column() != Instance)
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
            return tr("A caller instance, from caller events and the attempts' source_instance");
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
    m_table->setColumnWidth(0, 240);
    for (int c = 1; c < InstanceTableModel::ColumnCount - 1; ++c)
        m_table->setColumnWidth(c, 140);
    m_table->setAlternatingRowColors(true);
    auto* hint = new QLabel(tr("Select an instance to filter the anomalies to it."), this);
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
