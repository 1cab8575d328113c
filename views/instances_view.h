#pragma once
// Per source instance: calls, retries, duplicate-caller and conflict counts,
// and a lane over time of its calls, retries and duplicates (a switch-over
// from one instance to another shows at a glance). Selecting one filters the
// anomalies to it.
#include "models/dashboard_data.h"

#include <QAbstractTableModel>
#include <QWidget>

class QLabel;
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
        Activity, // the lane over time (painted by the view's delegate)
        ColumnCount
    };
    enum Role { SortRole = Qt::UserRole, RowRole }; // RowRole: the row in this model
    using QAbstractTableModel::QAbstractTableModel;
    void setStats(std::vector<InstanceStats> stats, EpochMillis laneFrom = kNoTime,
                  EpochMillis laneTo = kNoTime);
    const InstanceStats& stats(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    EpochMillis laneFrom() const { return m_laneFrom; }
    EpochMillis laneTo() const { return m_laneTo; }
    int laneMax() const { return m_laneMax; } // the busiest bucket of any instance
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    std::vector<InstanceStats> m_rows;
    EpochMillis m_laneFrom = kNoTime, m_laneTo = kNoTime;
    int m_laneMax = 0;
};

class InstancesView : public QWidget {
    Q_OBJECT
public:
    explicit InstancesView(QWidget* parent = nullptr);
    void setStats(std::vector<InstanceStats> stats, EpochMillis laneFrom = kNoTime,
                  EpochMillis laneTo = kNoTime);
    InstanceTableModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }

signals:
    void instanceSelected(const QString& instance); // "" when cleared
    // Double-click or the context menu: the anomalies naming it, on their tab.
    void anomaliesRequested(const QString& instance);

private:
    InstanceTableModel* m_model;
    QTableView* m_table;
    QLabel* m_axis; // the lanes' span and what they show
};

} // namespace callscope
