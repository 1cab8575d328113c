#include "views/instances_view.h"

#include "views/cached_text_delegate.h"
#include "views/clock.h"
#include "views/palette.h"

#include <QApplication>
#include <QClipboard>
#include <QFontMetrics>
#include <QHeaderView>
#include <QHelpEvent>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace callscope {

void InstanceTableModel::setStats(std::vector<InstanceStats> stats, EpochMillis laneFrom,
                                  EpochMillis laneTo) {
    m_laneFrom = laneFrom;
    m_laneTo = laneTo;
    m_laneMax = 0;
    for (const InstanceStats& st : stats) {
        for (const std::uint16_t n : st.callsOverTime)
            m_laneMax = std::max<int>(m_laneMax, n);
        for (const std::uint16_t n : st.retriesOverTime) // a retry storm stays in its lane
            m_laneMax = std::max<int>(m_laneMax, n);
    }
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
        case Activity: // painted; sorted by when the instance was last busy
            if (role == Qt::DisplayRole)
                return {};
            for (std::size_t b = s.callsOverTime.size(); b-- > 0;)
                if (s.callsOverTime[b] > 0)
                    return static_cast<int>(b);
            return -1;
        }
    }
    if (role == RowRole)
        return index.row();
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
        case Activity:
            return tr("Over the calls held: bars are the calls the instance started acting on "
                      "(one scale for every row), orange the retries, and a marker each "
                      "duplicate caller when the instance came in (red: concurrent, blue: "
                      "migration). Hover for one bar's figures.");
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
    case Activity:
        return tr("Over time");
    }
    return {};
}

namespace {

QColor retryColor() {
    return stateColor("TIMEOUT_UNKNOWN");
}
QColor duplicateColor(bool migration) {
    return migration ? severityColor("info") : severityColor("critical");
}

// Paints an instance's lane: its calls per bucket as bars on one scale for
// every row, retries over them, and a marker per duplicate caller.
class LaneDelegate : public QStyledItemDelegate {
public:
    LaneDelegate(InstanceTableModel* model, QObject* parent)
        : QStyledItemDelegate(parent), m_model(model) {}

    void paint(QPainter* p, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyleOptionViewItem o(option);
        initStyleOption(&o, index);
        o.text.clear();
        const QWidget* w = option.widget;
        QStyle* style = w ? w->style() : QApplication::style();
        style->drawControl(QStyle::CE_ItemViewItem, &o, p, w);
        const int row = index.data(InstanceTableModel::RowRole).toInt();
        if (row < 0 || row >= m_model->rowCount() || m_model->laneTo() <= m_model->laneFrom())
            return;
        const InstanceStats& st = m_model->stats(row);
        const QRectF r = lane(option.rect);
        p->save();
        p->setClipRect(option.rect);
        p->setRenderHint(QPainter::Antialiasing, false);
        QColor base = option.palette.color(QPalette::Mid);
        base.setAlpha(90);
        p->setPen(base);
        p->drawLine(QPointF(r.left(), r.bottom()), QPointF(r.right(), r.bottom()));
        const double bw = r.width() / double(kLaneBuckets);
        const double scale = m_model->laneMax() > 0 ? r.height() / m_model->laneMax() : 0;
        const auto bars = [&](const std::vector<std::uint16_t>& lane, const QColor& c) {
            for (std::size_t b = 0; b < lane.size(); ++b) {
                if (lane[b] == 0)
                    continue;
                const double h = std::clamp(lane[b] * scale, 1.5, r.height());
                p->fillRect(QRectF(r.left() + b * bw, r.bottom() - h, std::max(1.0, bw - 0.5), h),
                            c);
            }
        };
        bars(st.callsOverTime, instanceColor(qs(st.instance)));
        bars(st.retriesOverTime, retryColor());
        p->setRenderHint(QPainter::Antialiasing, true);
        for (const InstanceStats::Mark& m : st.duplicates) {
            const double x = xOf(r, m.at);
            if (x < r.left() || x > r.right())
                continue;
            const QColor c = duplicateColor(m.migration);
            p->setPen(QPen(c, 1.5, m.migration ? Qt::DashLine : Qt::SolidLine));
            p->drawLine(QPointF(x, r.top() + 4), QPointF(x, r.bottom()));
            QPolygonF tri;
            tri << QPointF(x - 4, r.top() - 1) << QPointF(x + 4, r.top() - 1)
                << QPointF(x, r.top() + 5);
            p->setPen(Qt::NoPen);
            p->setBrush(c);
            p->drawPolygon(tri);
        }
        p->restore();
    }

    bool helpEvent(QHelpEvent* e, QAbstractItemView* view, const QStyleOptionViewItem& option,
                   const QModelIndex& index) override {
        const int row = index.data(InstanceTableModel::RowRole).toInt();
        if (e->type() != QEvent::ToolTip || row < 0 || row >= m_model->rowCount() ||
            m_model->laneTo() <= m_model->laneFrom())
            return QStyledItemDelegate::helpEvent(e, view, option, index);
        const InstanceStats& st = m_model->stats(row);
        const QRectF r = lane(option.rect);
        const double f = (e->pos().x() - r.left()) / r.width();
        if (f < 0 || f >= 1) {
            QToolTip::hideText();
            return true;
        }
        const auto b = static_cast<std::size_t>(f * kLaneBuckets);
        const EpochMillis span = m_model->laneTo() - m_model->laneFrom();
        const EpochMillis from =
            m_model->laneFrom() + static_cast<EpochMillis>(b) * span / EpochMillis(kLaneBuckets);
        const EpochMillis to = m_model->laneFrom() +
                               static_cast<EpochMillis>(b + 1) * span / EpochMillis(kLaneBuckets);
        const auto at = [](const std::vector<std::uint16_t>& lane, std::size_t i) {
            return i < lane.size() ? int(lane[i]) : 0;
        };
        QString text = shownText(st.instance) + QStringLiteral("\n") +
                       displayTimeOfDay(from, TimeDetail::Seconds) + QStringLiteral(" – ") +
                       displayTimeOfDay(to, TimeDetail::Seconds) + QStringLiteral(" ") +
                       zoneLabel(from) + QStringLiteral("\n") +
                       tr("%n call(s)", nullptr, at(st.callsOverTime, b)) + QStringLiteral(", ") +
                       tr("%n retry(s)", nullptr, at(st.retriesOverTime, b));
        for (const InstanceStats::Mark& m : st.duplicates)
            if (m.at >= from && m.at < to)
                text += QStringLiteral("\n") +
                        tr("duplicate caller (%1) at %2")
                            .arg(m.migration ? tr("migration") : tr("concurrent"),
                                 displayTimeOfDay(m.at));
        QToolTip::showText(e->globalPos(), plainTip(text), view);
        return true;
    }

private:
    static QRectF lane(const QRect& cell) { return QRectF(cell).adjusted(4, 5, -4, -3); }
    double xOf(const QRectF& r, EpochMillis t) const {
        const double span = double(m_model->laneTo() - m_model->laneFrom());
        return r.left() + (t - m_model->laneFrom()) / span * r.width();
    }
    InstanceTableModel* m_model;
};

} // namespace

InstancesView::InstancesView(QWidget* parent)
    : QWidget(parent), m_model(new InstanceTableModel(this)), m_table(new QTableView(this)),
      m_axis(new QLabel(this)) {
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(InstanceTableModel::SortRole);
    m_table->setModel(proxy);
    m_table->setItemDelegate(new CachedTextDelegate(m_table)); // redrawn each second
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(InstanceTableModel::OpenAnomalies, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Every column fits at 1024 px; the last one stretches.
    // Each count column as wide as its title; the lane takes the rest.
    m_table->setColumnWidth(0, 170);
    const QFontMetrics fm(m_table->horizontalHeader()->font());
    for (int c = 1; c < InstanceTableModel::Activity; ++c)
        m_table->setColumnWidth(
            c, std::max(c == InstanceTableModel::Role ? 95 : 60,
                        fm.horizontalAdvance(m_model->headerData(c, Qt::Horizontal,
                                                                 Qt::DisplayRole)
                                                 .toString()) +
                            30)); // the margins and the sort arrow
    m_table->setItemDelegateForColumn(InstanceTableModel::Activity,
                                      new LaneDelegate(m_model, this));
    m_table->verticalHeader()->setDefaultSectionSize(
        std::max(34, m_table->verticalHeader()->defaultSectionSize()));
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
    m_axis->setObjectName(QStringLiteral("lanesAxis"));
    m_axis->setTextFormat(Qt::RichText);
    layout->addWidget(hint);
    layout->addWidget(m_axis);
    layout->addWidget(m_table, 1);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const auto rows = m_table->selectionModel()->selectedRows();
        // The name as stored (the filter compares it with the anomalies'), not as shown.
        emit instanceSelected(rows.isEmpty()
                                  ? QString()
                                  : rows.front().data(InstanceTableModel::SortRole).toString());
    });
}

void InstancesView::setStats(std::vector<InstanceStats> stats, EpochMillis laneFrom,
                             EpochMillis laneTo) {
    m_model->setStats(std::move(stats), laneFrom, laneTo);
    if (laneTo <= laneFrom) {
        m_axis->setText(tr("Over time: nothing held yet"));
        return;
    }
    const auto swatch = [](const QColor& c, const QString& what) {
        return QStringLiteral("<span style=\"color:%1\">■</span> %2")
            .arg(c.name(), what.toHtmlEscaped());
    };
    // Only our own words and times here: no instance name reaches this label.
    const QString fromText = displayDateTime(laneFrom, TimeDetail::Seconds);
    const QString toText = displayDateTime(laneTo, TimeDetail::Seconds);
    m_axis->setText(tr("Over time: %1 – %2 %3, %4 per bar.")
                        .arg(fromText,
                             // The end's date too when it is another day.
                             toText.left(10) == fromText.left(10) ? toText.mid(11) : toText,
                             zoneLabel(laneFrom),
                             humanDuration((laneTo - laneFrom) / std::int64_t(kLaneBuckets)))
                        .toHtmlEscaped() +
                    QStringLiteral("&nbsp;&nbsp; ") + tr("bars: calls (the instance's colour)") +
                    QStringLiteral("&nbsp;&nbsp; ") + swatch(retryColor(), tr("retries")) +
                    QStringLiteral("&nbsp;&nbsp; ") +
                    swatch(duplicateColor(false), tr("duplicate caller, concurrent")) +
                    QStringLiteral("&nbsp;&nbsp; ") +
                    swatch(duplicateColor(true), tr("duplicate caller, migration")));
}

} // namespace callscope
