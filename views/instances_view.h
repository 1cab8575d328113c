#pragma once
// Per source instance: calls, retries, duplicate-caller and conflict counts.
// Selecting one filters the anomalies to it.
#include "models/dashboard_data.h"

#include <QAbstractTableModel>
#include <QWidget>

class QTableView;

namespace callscope {

class InstanceTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Instance,
        Role,
        Calls,
        Retries,
        DuplicateCallers,
        Conflicts,
        OpenAnomalies,
        ColumnCount
    };
    enum Role { SortRole = Qt::UserRole };
    using QAbstractTableModel::QAbstractTableModel;
    void setStats(std::vector<InstanceStats> stats);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    std::vector<InstanceStats> m_rows;
};

class InstancesView : public QWidget {
    Q_OBJECT
public:
    explicit InstancesView(QWidget* parent = nullptr);
    void setStats(std::vector<InstanceStats> stats);
    InstanceTableModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }

signals:
    void instanceSelected(const QString& instance); // "" when cleared
    // Double-click or the context menu: the anomalies naming it, on their tab.
    void anomaliesRequested(const QString& instance);

private:
    InstanceTableModel* m_model;
    QTableView* m_table;
};

} // namespace callscope
