#pragma once
// The anomalies as a table: one row per anomaly, open and resolved; updated
// once per batch of changes (one insert for new rows, one dataChanged, and
// removal of the anomalies the engine forgot).
#include "models/anomaly.h"
#include "models/detection_engine.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <array>
#include <unordered_map>

namespace callscope {

class AnomalyTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kind, Severity, State, CallIds, Instances, Age, Summary, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole,
        CallIdRole,
        KindRole,
        SeverityRole,
        OpenRole,
        InstancesRole,
        SearchTextRole,
        InWindowRole // the anomaly was active within the relative window
    };

    explicit AnomalyTableModel(QObject* parent = nullptr);

    void applyChanges(const std::vector<AnomalyChange>& changes);
    // A new engine (another window or config) numbers its anomalies afresh.
    void clear();
    void setNow(EpochMillis now); // ages move on (agesMoved), a relative window slides
    // A relative window ("Last 15 min"): only anomalies active within `ms`
    // before now are in it (open waits always, other open ones by their
    // latest evidence, resolved ones by their resolution) and counted;
    // 0 = everything held (live).
    void setWindow(qint64 ms);
    qint64 window() const { return m_windowMs; }
    bool inWindow(const Anomaly& a) const;
    bool inWindowAt(const Anomaly& a, EpochMillis now) const;
    const Anomaly& anomaly(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    int openCount(AnomalyKind kind) const { return m_openByKind[static_cast<std::size_t>(kind)]; }
    const std::array<int, kAnomalyKindCount>& openByKind() const { return m_openByKind; }
    const std::array<int, 3>& openBySeverity() const { return m_openBySeverity; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

signals:
    // Ages and live summaries read differently now: views repaint. No filter
    // answer changed (a row that left the window said so) and ages keep their
    // order (a table sorted by Summary is not sorted again for this).
    void agesMoved();

private:
    std::vector<Anomaly> m_rows;
    std::unordered_map<std::uint64_t, int> m_rowOf; // anomaly id -> row
    EpochMillis m_now = 0;
    qint64 m_windowMs = 0;
    void recount();
    // Kept as rows change, so a frame needs no pass over every row.
    std::array<int, kAnomalyKindCount> m_openByKind{};
    std::array<int, 3> m_openBySeverity{};
    void count(const Anomaly& a, int sign);
    // Removes these rows (the anomalies the engine forgot).
    void dropRows(std::vector<int> rows);
};

// Filters by kind, minimum severity, instance and free text; resolved rows on demand.
class AnomalyFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setKind(const QString& kind); // "" = every kind
    void setMinSeverity(int severity); // 0 info .. 2 critical
    void setInstance(const QString& instance);
    void setText(const QString& text);
    void setShowResolved(bool show);
    QString instance() const { return m_instance; }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    QString m_kind, m_instance, m_text;
    int m_minSeverity = 0;
    bool m_showResolved = false;
};

} // namespace callscope
