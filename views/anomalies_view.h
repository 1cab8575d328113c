#pragma once
// The anomaly table with its filters: kind, severity, instance, text, and
// resolved ones on demand. Enter or a double-click opens the drill-down.
#include "views/anomaly_table_model.h"

#include <QWidget>

class QComboBox;
class QLineEdit;
class QCheckBox;
class QLabel;
class QTableView;

namespace callscope {

class AnomaliesView : public QWidget {
    Q_OBJECT
public:
    explicit AnomaliesView(AnomalyTableModel* model, QWidget* parent = nullptr);
    void setInstanceFilter(const QString& instance);
    void refreshCounts();
    QTableView* table() const { return m_table; }
    AnomalyFilterModel* filter() const { return m_filter; }
    QLabel* counts() const { return m_counts; }
    // The table's context menu for the row at `index` (tests read its actions).
    QMenu* contextMenuFor(const QModelIndex& index);

signals:
    void openCall(const QString& callId);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void openCurrent();
    void showContextMenu(const QPoint& pos);
    void copySelection();

    AnomalyTableModel* m_model;
    AnomalyFilterModel* m_filter;
    QComboBox* m_kind;
    QComboBox* m_severity;
    QLineEdit* m_instance;
    QLineEdit* m_text;
    QCheckBox* m_resolved;
    QLabel* m_counts;
    QTableView* m_table;
};

} // namespace callscope
