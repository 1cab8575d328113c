#include "views/anomaly_table_model.h"

#include "views/clock.h"
#include "views/palette.h"

#include <QBrush>

namespace callscope {
namespace {

// As shown (control characters escaped) and as stored (for filters and lookups).
QString join(const std::vector<std::string>& v, const char* sep = ", ") {
    QStringList l;
    for (const auto& s : v)
        l << shownText(s);
    return l.join(QString::fromUtf8(sep));
}

QString rawJoin(const std::vector<std::string>& v, const char* sep) {
    QStringList l;
    for (const auto& s : v)
        l << qs(s);
    return l.join(QString::fromUtf8(sep));
}

} // namespace

AnomalyTableModel::AnomalyTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void AnomalyTableModel::applyChanges(const std::vector<AnomalyChange>& changes) {
    std::vector<Anomaly> added;
    int minChanged = INT32_MAX, maxChanged = -1;
    std::unordered_map<std::uint64_t, std::size_t> addedAt;
    std::vector<int> forgotten;
    for (const AnomalyChange& c : changes) {
        const auto it = m_rowOf.find(c.anomaly.id);
        if (c.what == ChangeKind::Forgotten) {
            if (it != m_rowOf.end())
                forgotten.push_back(it->second);
            else if (const auto a = addedAt.find(c.anomaly.id); a != addedAt.end())
                added[a->second].id = 0; // opened and forgotten in one batch
            continue;
        }
        if (it != m_rowOf.end()) {
            Anomaly& row = m_rows[static_cast<std::size_t>(it->second)];
            count(row, -1);
            row = c.anomaly;
            count(row, +1);
            minChanged = std::min(minChanged, it->second);
            maxChanged = std::max(maxChanged, it->second);
        } else if (const auto a = addedAt.find(c.anomaly.id); a != addedAt.end()) {
            added[a->second] = c.anomaly; // opened and changed in one batch
        } else {
            addedAt.emplace(c.anomaly.id, added.size());
            added.push_back(c.anomaly);
        }
    }
    if (maxChanged >= 0)
        emit dataChanged(index(minChanged, 0), index(maxChanged, ColumnCount - 1));
    std::erase_if(added, [](const Anomaly& a) { return a.id == 0; });
    dropRows(std::move(forgotten));
    if (!added.empty()) {
        const int first = static_cast<int>(m_rows.size());
        beginInsertRows({}, first, first + static_cast<int>(added.size()) - 1); // last is inclusive
        for (Anomaly& a : added) {
            count(a, +1);
            m_rowOf.emplace(a.id, static_cast<int>(m_rows.size()));
            m_rows.push_back(std::move(a));
        }
        endInsertRows();
    }
}

void AnomalyTableModel::dropRows(std::vector<int> rows) {
    if (rows.empty())
        return;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    std::size_t runs = 1;
    for (std::size_t k = 1; k < rows.size(); ++k)
        runs += rows[k] != rows[k - 1] + 1;
    if (runs > 8) {
        // Scattered (resolved anomalies are forgotten first): one pass, one reset,
        // rather than a removal per run through every proxy.
        beginResetModel();
        std::vector<std::uint8_t> gone(m_rows.size(), 0);
        for (const int r : rows)
            gone[static_cast<std::size_t>(r)] = 1;
        std::vector<Anomaly> kept;
        kept.reserve(m_rows.size() - rows.size());
        for (std::size_t r = 0; r < m_rows.size(); ++r) {
            if (gone[r])
                count(m_rows[r], -1);
            else
                kept.push_back(std::move(m_rows[r]));
        }
        m_rows.swap(kept);
        m_rowOf.clear();
        for (std::size_t r = 0; r < m_rows.size(); ++r)
            m_rowOf.emplace(m_rows[r].id, static_cast<int>(r));
        endResetModel();
        return;
    }
    // Back to front, one contiguous run at a time (the forgotten are mostly the oldest rows).
    for (std::size_t end = rows.size(); end > 0;) {
        std::size_t begin = end - 1;
        while (begin > 0 && rows[begin - 1] == rows[begin] - 1)
            --begin;
        const int first = rows[begin], last = rows[end - 1];
        beginRemoveRows({}, first, last);
        for (int r = first; r <= last; ++r)
            count(m_rows[static_cast<std::size_t>(r)], -1);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + last + 1);
        endRemoveRows();
        end = begin;
    }
    m_rowOf.clear();
    for (std::size_t r = 0; r < m_rows.size(); ++r)
        m_rowOf.emplace(m_rows[r].id, static_cast<int>(r));
}

void AnomalyTableModel::clear() {
    beginResetModel();
    m_rows.clear();
    m_rowOf.clear();
    m_openByKind = {};
    m_openBySeverity = {};
    endResetModel();
}

void AnomalyTableModel::setWindow(qint64 ms) {
    m_windowMs = std::max<qint64>(0, ms);
    recount();
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

bool AnomalyTableModel::inWindow(const Anomaly& a) const {
    return inWindowAt(a, m_now);
}

bool AnomalyTableModel::inWindowAt(const Anomaly& a, EpochMillis now) const {
    if (m_windowMs <= 0 || (a.open && a.since != kNoTime))
        return true; // (an open wait goes on now: it is in any window)
    EpochMillis last = a.open ? a.firstEventAt : a.resolvedAt;
    for (const Evidence& e : a.evidence)
        last = std::max(last, e.at);
    return last >= now - m_windowMs;
}

void AnomalyTableModel::recount() {
    m_openByKind = {};
    m_openBySeverity = {};
    for (const Anomaly& a : m_rows)
        count(a, +1);
}

void AnomalyTableModel::setNow(EpochMillis now) {
    const EpochMillis before = m_now;
    m_now = now;
    if (m_windowMs > 0) {
        // The window slides: a row that left it (or came back, the clock went
        // back) is counted again and then, run by run, filtered again (the
        // filter's listeners read the counts: all are right before any run).
        std::vector<int> flipped;
        for (int r = 0; r < static_cast<int>(m_rows.size()); ++r) {
            const Anomaly& a = m_rows[static_cast<std::size_t>(r)];
            const bool is = inWindowAt(a, now);
            if (is == inWindowAt(a, before))
                continue;
            if (a.open) {
                m_openByKind[static_cast<std::size_t>(a.kind)] += is ? 1 : -1;
                m_openBySeverity[static_cast<std::size_t>(a.severity)] += is ? 1 : -1;
            }
            flipped.push_back(r);
        }
        for (std::size_t k = 0; k < flipped.size();) {
            std::size_t end = k + 1;
            while (end < flipped.size() && flipped[end] == flipped[end - 1] + 1)
                ++end;
            emit dataChanged(index(flipped[k], 0), index(flipped[end - 1], ColumnCount - 1),
                             {InWindowRole});
            k = end;
        }
    }
    // Ages and live summaries are texts made when shown: the view repaints.
    // (A dataChanged over every row made the filter model filter and sort
    // every row again, 20 times a second: most of a frame at 30k rows.)
    emit agesMoved();
}

void AnomalyTableModel::count(const Anomaly& a, int sign) {
    if (!a.open || !inWindow(a))
        return;
    m_openByKind[static_cast<std::size_t>(a.kind)] += sign;
    m_openBySeverity[static_cast<std::size_t>(a.severity)] += sign;
}

int AnomalyTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int AnomalyTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AnomalyTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Anomaly& a = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Kind:
            return qs(toString(a.kind));
        case Severity:
            return qs(toString(a.severity));
        case State:
            return a.open ? QStringLiteral("open") : QStringLiteral("resolved");
        case CallIds:
            return join(a.callIds);
        case Instances:
            return join(a.instances);
        case Age:
            return humanDuration((a.open ? m_now : a.resolvedAt) - a.firstEventAt);
        case Summary:
            return liveSummary(a, m_now);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case Severity:
            return static_cast<int>(a.severity);
        case State:
            return a.open ? 1 : 0;
        case Age:
            return static_cast<qlonglong>(-a.firstEventAt); // older sorts as more
        default:
            return data(index, Qt::DisplayRole);
        }
    case Qt::DecorationRole:
        if (index.column() == Kind) // the kind's colour, as in the overview's chart
            return kindColor(static_cast<std::size_t>(a.kind));
        break;
    case Qt::ForegroundRole:
        if (index.column() == Severity)
            return QBrush(severityColor(toString(a.severity)));
        if (!a.open)
            return QBrush(QColor(0x8a, 0x8f, 0x98));
        break;
    case Qt::ToolTipRole:
        if (index.column() == Summary || index.column() == CallIds)
            return plainTip(liveSummary(a, m_now) + QStringLiteral("\n") + join(a.callIds, "\n"));
        if (index.column() == Instances)
            return plainTip(join(a.instances, "\n"));
        if (index.column() == Age)
            return tr("first evidence %1 %2")
                .arg(displayDateTime(a.firstEventAt), zoneLabel(a.firstEventAt));
        break;
    case CallIdRole: // raw: a lookup key
        return a.callIds.empty() ? QString() : qs(a.callIds.front());
    case KindRole:
        return qs(toString(a.kind));
    case SeverityRole:
        return static_cast<int>(a.severity);
    case OpenRole:
        return a.open;
    case InWindowRole:
        return inWindow(a);
    case InstancesRole:
        return rawJoin(a.instances, "\n");
    case SearchTextRole:
        return QString(rawJoin(a.callIds, " ") + QLatin1Char(' ') + rawJoin(a.instances, " ") +
                       QLatin1Char(' ') + qs(a.summary) + QLatin1Char(' ') +
                       rawJoin(a.digests, " "));
    }
    return {};
}

QVariant AnomalyTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Kind:
            return tr("The detection that fired (SPEC \u00a73), e.g. key_rotation");
        case Severity:
            return tr("critical, warning or info; most severe first by default");
        case State:
            return tr("open while the anomaly holds; resolved once it stops holding");
        case CallIds:
            return tr("Every callId involved; the first one opens in the drill-down");
        case Instances:
            return tr("Caller and server instances seen acting on these callIds");
        case Age:
            return tr("Time since the first evidence (until resolution for resolved ones)");
        case Summary:
            return tr("What was found, in one line; the drill-down shows the evidence");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Kind:
        return tr("Kind");
    case Severity:
        return tr("Severity");
    case State:
        return tr("State");
    case CallIds:
        return tr("CallIds");
    case Instances:
        return tr("Instances");
    case Age:
        return tr("Age");
    case Summary:
        return tr("Summary");
    }
    return {};
}

void AnomalyFilterModel::setKind(const QString& k) {
    m_kind = k;
    invalidateFilter();
}
void AnomalyFilterModel::setMinSeverity(int s) {
    m_minSeverity = s;
    invalidateFilter();
}
void AnomalyFilterModel::setInstance(const QString& i) {
    m_instance = i;
    invalidateFilter();
}
void AnomalyFilterModel::setText(const QString& t) {
    m_text = t;
    invalidateFilter();
}
void AnomalyFilterModel::setShowResolved(bool s) {
    m_showResolved = s;
    invalidateFilter();
}

bool AnomalyFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const {
    const QModelIndex i = sourceModel()->index(row, 0, parent);
    using M = AnomalyTableModel;
    if (!m_showResolved && !i.data(M::OpenRole).toBool())
        return false;
    if (!i.data(M::InWindowRole).toBool())
        return false;
    if (!m_kind.isEmpty() && i.data(M::KindRole).toString() != m_kind)
        return false;
    if (i.data(M::SeverityRole).toInt() < m_minSeverity)
        return false;
    if (!m_instance.isEmpty() &&
        !i.data(M::InstancesRole).toString().split(QLatin1Char('\n')).contains(m_instance))
        return false;
    if (!m_text.isEmpty() &&
        !i.data(M::SearchTextRole).toString().contains(m_text, Qt::CaseInsensitive))
        return false;
    return true;
}

} // namespace callscope
