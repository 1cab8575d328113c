#include "views/timeline_painter.h"

#include "models/anomaly.h"
#include "models/domain.h"
#include "views/clock.h"
#include "views/palette.h"

#include <QDateTime>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>

#include <algorithm>
#include <cmath>

namespace callscope {
namespace {

const QColor kEvidence(0xff, 0x8c, 0x00);
const QColor kNeutral(0x90, 0x94, 0x9c); // key icons: readable on light and dark

void drawMarker(QPainter& p, const QPointF& c, const std::string& state, Lane lane, double r) {
    if (lane == Lane::Receipt) {
        QPainterPath tri;
        tri.moveTo(c.x(), c.y() - r);
        tri.lineTo(c.x() + r, c.y() + r * 0.8);
        tri.lineTo(c.x() - r, c.y() + r * 0.8);
        tri.closeSubpath();
        p.drawPath(tri);
        return;
    }
    if (state == "EXECUTED") {
        p.drawEllipse(c, r, r);
    } else if (state == "REOCCUPIED") {
        QPolygonF d;
        d << QPointF(c.x(), c.y() - r) << QPointF(c.x() + r, c.y()) << QPointF(c.x(), c.y() + r)
          << QPointF(c.x() - r, c.y());
        p.drawPolygon(d);
    } else if (state == "REPLAYED") {
        p.drawRect(QRectF(c.x() - r * 0.8, c.y() - r * 0.8, r * 1.6, r * 1.6));
    } else if (state == "DIGEST_CONFLICT") {
        p.drawLine(QPointF(c.x() - r, c.y() - r), QPointF(c.x() + r, c.y() + r));
        p.drawLine(QPointF(c.x() - r, c.y() + r), QPointF(c.x() + r, c.y() - r));
    } else { // IN_PROGRESS: a ring
        p.save();
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(c, r, r);
        p.restore();
    }
}

double laneY(const TimelineLayout& l, Lane lane) {
    return lane == Lane::Attempt ? l.attemptLane.center().y() : l.receiptLane.center().y();
}

QFont smallFont(const QFont& font) {
    QFont small = font;
    if (font.pointSizeF() > 0)
        small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    else
        small.setPixelSize(std::max(8, font.pixelSize() * 85 / 100));
    return small;
}

bool callerOpen(const std::string& state) {
    for (std::size_t i = 0; i < kCallerStateNames.size(); ++i)
        if (kCallerStateNames[i] == state)
            return !isTerminal(static_cast<CallerState>(i));
    return false;
}

// --- The key: what band colours and marker shapes mean. -------------------

enum class KeyIcon : std::uint8_t {
    Band,
    Attempt,
    Duration,
    Receipt,
    Duplicate,
    OutOfOrder,
    CallerEdge,
    Evidence,
    Now
};
struct KeyItem {
    KeyIcon icon;
    std::string state;
    QString label;
};
struct KeyRow {
    QString title;
    std::vector<KeyItem> items;
};

// States present (as the bands show them); the core marks always, the rarer
// ones when this call has them.
std::vector<KeyRow> keyRows(const CallTimeline& t, const QSet<QString>& outlined, EpochMillis now) {
    std::vector<KeyRow> rows;
    if (t.entries.empty())
        return rows;
    KeyRow states{QStringLiteral("states"), {}};
    for (const Lane lane : {Lane::ServerRecord, Lane::CallerView})
        for (const StateBand& b : t.bands)
            if (b.lane == lane &&
                std::none_of(states.items.begin(), states.items.end(),
                             [&](const KeyItem& k) { return k.state == b.state; }))
                states.items.push_back({KeyIcon::Band, b.state, shownText(b.state)});
    if (!states.items.empty())
        rows.push_back(std::move(states));

    bool has[5] = {}; // by AttemptOutcome
    bool duration = false, duplicate = false, outOfOrder = false;
    for (const TimelineEntry& e : t.entries) {
        if (e.lane == Lane::Attempt) {
            for (std::size_t i = 0; i < kAttemptOutcomeNames.size(); ++i)
                if (kAttemptOutcomeNames[i] == e.state)
                    has[i] = true;
            duration = duration || (e.until != kNoTime && e.until > e.at);
        }
        if (e.lane == Lane::Attempt || e.lane == Lane::Receipt) {
            duplicate = duplicate || e.duplicate;
            outOfOrder = outOfOrder || e.outOfOrder;
        }
    }
    KeyRow marks{QStringLiteral("marks"), {}};
    marks.items.push_back({KeyIcon::Attempt, "EXECUTED", QStringLiteral("attempt executed")});
    const char* outcomeLabels[] = {"", "attempt in progress", "replayed", "digest conflict",
                                   "reoccupied"};
    for (std::size_t i = 1; i < kAttemptOutcomeNames.size(); ++i)
        if (has[i])
            marks.items.push_back({KeyIcon::Attempt, std::string(kAttemptOutcomeNames[i]),
                                   QString::fromLatin1(outcomeLabels[i])});
    if (duration)
        marks.items.push_back({KeyIcon::Duration, {}, QStringLiteral("execution time")});
    marks.items.push_back({KeyIcon::Receipt, {}, QStringLiteral("receipt (vN = version)")});
    if (duplicate)
        marks.items.push_back({KeyIcon::Duplicate, {}, QStringLiteral("duplicate (hollow)")});
    if (outOfOrder)
        marks.items.push_back({KeyIcon::OutOfOrder, {}, QStringLiteral("out of order (thick)")});
    marks.items.push_back({KeyIcon::CallerEdge, {}, QStringLiteral("caller event (band edge)")});
    marks.items.push_back({KeyIcon::Evidence,
                           {},
                           outlined.isEmpty() ? QStringLiteral("evidence (outlined)")
                                              : QStringLiteral("evidence of the chosen anomaly")});
    if (now != kNoTime)
        marks.items.push_back({KeyIcon::Now, {}, QStringLiteral("now (still open)")});
    rows.push_back(std::move(marks));
    return rows;
}

void drawKeyIcon(QPainter& p, const KeyItem& k, const QRectF& r, const QPalette& pal) {
    const QPointF c = r.center();
    p.save();
    switch (k.icon) {
    case KeyIcon::Band: {
        const QColor fill = stateColor(k.state);
        p.setPen(QPen(fill.darker(130), 1));
        p.setBrush(fill);
        p.drawRect(QRectF(r.left(), c.y() - 5, r.width(), 10));
        break;
    }
    case KeyIcon::Attempt:
        p.setPen(QPen(kNeutral.darker(140), 1.5));
        p.setBrush(kNeutral);
        drawMarker(p, c, k.state, Lane::Attempt, 5);
        break;
    case KeyIcon::Duration:
        p.setPen(QPen(kNeutral, 3, Qt::SolidLine, Qt::FlatCap));
        p.drawLine(QPointF(r.left() + 3, c.y()), QPointF(r.right(), c.y()));
        p.setPen(QPen(kNeutral.darker(140), 1.5));
        p.setBrush(kNeutral);
        p.drawEllipse(QPointF(r.left() + 3, c.y()), 3.5, 3.5);
        break;
    case KeyIcon::Receipt:
        p.setPen(QPen(stateColor("SUCCESS"), 1.5));
        p.setBrush(kNeutral);
        drawMarker(p, c, {}, Lane::Receipt, 5);
        break;
    case KeyIcon::Duplicate:
        p.setPen(QPen(kNeutral.darker(140), 1.5));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(c, 5, 5);
        break;
    case KeyIcon::OutOfOrder:
        p.setPen(QPen(kNeutral.darker(160), 2.5));
        p.setBrush(kNeutral);
        p.drawEllipse(c, 4.5, 4.5);
        break;
    case KeyIcon::CallerEdge: {
        const QColor a = stateColor("AWAITING_RESPONSE"), b = stateColor("CONFIRMED_SUCCESS");
        const QRectF band(r.left(), c.y() - 5, r.width(), 10);
        p.setPen(Qt::NoPen);
        p.setBrush(a);
        p.drawRect(QRectF(band.left(), band.top(), band.width() / 2, band.height()));
        p.setBrush(b);
        p.drawRect(QRectF(c.x(), band.top(), band.width() / 2, band.height()));
        p.setPen(QPen(pal.color(QPalette::WindowText), 1.5));
        p.drawLine(QPointF(c.x(), band.top() - 2), QPointF(c.x(), band.bottom() + 2));
        break;
    }
    case KeyIcon::Evidence:
        p.setPen(QPen(kEvidence, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(c.x() - 6, c.y() - 6, 12, 12), 3, 3);
        break;
    case KeyIcon::Now:
        p.setPen(QPen(pal.color(QPalette::WindowText), 1.5, Qt::DashLine));
        p.drawLine(QPointF(c.x(), r.top()), QPointF(c.x(), r.bottom()));
        break;
    }
    p.restore();
}

constexpr double kKeyIcon = 14, kKeyGap = 14;

// Flows the rows into `area` (row titles in the label column); paints when
// `p` is given. Returns the height used.
double layoutKey(QPainter* p, const QFontMetricsF& fm, const QRectF& area, double labelWidth,
                 const std::vector<KeyRow>& rows, const QPalette* pal) {
    const double lineH = std::max(16.0, std::ceil(fm.height()) + 3);
    const double x0 = area.left() + labelWidth, right = area.right();
    double y = area.top();
    for (const KeyRow& row : rows) {
        if (p) {
            p->setPen(pal->color(QPalette::WindowText));
            p->drawText(QRectF(area.left(), y, labelWidth - 8, lineH),
                        Qt::AlignRight | Qt::AlignVCenter, row.title);
        }
        double x = x0;
        for (const KeyItem& k : row.items) {
            const double w = kKeyIcon + 5 + fm.horizontalAdvance(k.label) + kKeyGap;
            if (x > x0 && x + w - kKeyGap > right) {
                x = x0;
                y += lineH;
            }
            if (p) {
                drawKeyIcon(*p, k, QRectF(x, y + 1, kKeyIcon, lineH - 2), *pal);
                p->setPen(pal->color(QPalette::WindowText));
                p->drawText(QRectF(x + kKeyIcon + 5, y, w - kKeyIcon - 5, lineH),
                            Qt::AlignLeft | Qt::AlignVCenter, k.label);
            }
            x += w;
        }
        y += lineH;
    }
    return y - area.top();
}

// Every band state of each lane and every mark: the legend a report prints
// once for all its timelines.
std::vector<KeyRow> fullKeyRows() {
    std::vector<KeyRow> rows;
    KeyRow server{QStringLiteral("server record"), {}};
    server.items.push_back({KeyIcon::Band, "ABSENT", QStringLiteral("ABSENT")});
    for (const std::string_view s : kRecordStatusNames)
        server.items.push_back({KeyIcon::Band, std::string(s), qs(s)});
    server.items.push_back({KeyIcon::Band, "EXPIRED", QStringLiteral("EXPIRED")});
    rows.push_back(std::move(server));
    KeyRow caller{QStringLiteral("caller view"), {}};
    for (const std::string_view s : kCallerStateNames)
        caller.items.push_back({KeyIcon::Band, std::string(s), qs(s)});
    rows.push_back(std::move(caller));
    KeyRow attempts{QStringLiteral("attempts"), {}};
    for (const std::string_view s : kAttemptOutcomeNames)
        attempts.items.push_back({KeyIcon::Attempt, std::string(s),
                                  qs(s).toLower().replace(QLatin1Char('_'), QLatin1Char(' '))});
    attempts.items.push_back({KeyIcon::Duration, {}, QStringLiteral("execution time")});
    rows.push_back(std::move(attempts));
    KeyRow marks{QStringLiteral("marks"), {}};
    marks.items.push_back(
        {KeyIcon::Receipt, {}, QStringLiteral("receipt (outline: its status; vN = version)")});
    marks.items.push_back({KeyIcon::Duplicate, {}, QStringLiteral("duplicate (hollow, \u00d72)")});
    marks.items.push_back(
        {KeyIcon::OutOfOrder, {}, QStringLiteral("out of order (thick, \u21ba)")});
    marks.items.push_back({KeyIcon::CallerEdge, {}, QStringLiteral("caller event (band edge)")});
    marks.items.push_back(
        {KeyIcon::Evidence, {}, QStringLiteral("evidence: an event the anomaly rests on")});
    marks.items.push_back({KeyIcon::Now, {}, QStringLiteral("now (still open)")});
    rows.push_back(std::move(marks));
    return rows;
}

constexpr double kFullKeyLabels = 110; // the timelines' lane label column

TickPlan ticksFor(const TimeAxis& axis, const QFontMetricsF& fm) {
    return planTicks(axis, displayOffsetMs(axis.from), [&](const TickFormat& f) {
        return fm.horizontalAdvance(tickLabel(axis.from, f)) + 8;
    });
}

} // namespace

double fullKeyHeight(const QFont& font, double width) {
    return layoutKey(nullptr, QFontMetricsF(font), QRectF(0, 0, width, 0), kFullKeyLabels,
                     fullKeyRows(), nullptr);
}

void paintFullKey(QPainter& p, const QRectF& area, const QFont& font, const QPalette& pal) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setFont(font);
    layoutKey(&p, QFontMetricsF(font), area, kFullKeyLabels, fullKeyRows(), &pal);
    p.restore();
}

std::int64_t displayOffsetMs(EpochMillis t) {
    if (displayZone() == DisplayZone::Utc)
        return 0;
    return std::int64_t(QDateTime::fromMSecsSinceEpoch(t).offsetFromUtc()) * 1000;
}

QString tickLabel(EpochMillis t, TickFormat f) {
    const QString s = displayDateTime(t, TimeDetail::Millis); // 2026-12-03 22:52:24.771
    QString date, time;
    switch (f.date) {
    case TickFormat::Date::None:
        break;
    case TickFormat::Date::MonthDay:
        date = s.mid(5, 5);
        break;
    case TickFormat::Date::YearMonthDay:
        date = s.left(10);
        break;
    }
    switch (f.time) {
    case TickFormat::Time::None:
        break;
    case TickFormat::Time::Minutes:
        time = s.mid(11, 5);
        break;
    case TickFormat::Time::Seconds:
        time = s.mid(11, 8);
        break;
    case TickFormat::Time::Millis:
        time = s.mid(11, 12);
        break;
    }
    if (date.isEmpty())
        return time;
    return time.isEmpty() ? date : date + QLatin1Char(' ') + time;
}

bool timelineOpen(const CallTimeline& t) {
    if (t.entries.empty())
        return false;
    if (t.record.present && t.record.status == "PROCESSING" &&
        (t.record.expireAt == kNoTime || t.record.expireAt > t.to))
        return true;
    for (auto it = t.entries.rbegin(); it != t.entries.rend(); ++it)
        if (it->lane == Lane::CallerView)
            return callerOpen(it->state);
    return false;
}

EpochMillis timelineNow(const CallTimeline& t) {
    return timelineOpen(t) ? t.to : kNoTime;
}

std::pair<EpochMillis, EpochMillis> timelineLife(const CallTimeline& t) {
    if (t.entries.empty() || t.from == kNoTime)
        return {kNoTime, kNoTime};
    EpochMillis a = t.from, b = t.from;
    for (const TimelineEntry& e : t.entries) {
        a = std::min(a, e.at);
        b = std::max(b, e.at);
        if (e.until != kNoTime)
            b = std::max(b, e.until);
    }
    if (t.record.present) {
        if (t.record.createdAt != kNoTime)
            a = std::min(a, t.record.createdAt);
        if (t.record.updatedAt != kNoTime)
            b = std::max(b, t.record.updatedAt);
    }
    const EpochMillis now = timelineNow(t);
    if (now != kNoTime)
        b = std::max(b, now);
    return {a, b};
}

TimeAxis fittedAxis(const CallTimeline& t, double width) {
    TimeAxis a;
    a.width = width;
    const auto [from, to] = timelineLife(t);
    if (from != kNoTime)
        a.fitLife(from, to);
    return a;
}

double timelineKeyHeight(const CallTimeline& t, const QSet<QString>& outlined, EpochMillis now,
                         const QFont& font, double width) {
    const TimelineLayout l = TimelineLayout::forRect(QRectF(0, 0, width, 400));
    const QFontMetricsF fm(smallFont(font));
    return layoutKey(nullptr, fm, QRectF(l.legendRow.left(), 0, l.legendRow.width(), 1e6),
                     l.labelWidth - 4, keyRows(t, outlined, now), nullptr);
}

TimelineLayout TimelineLayout::forRect(const QRectF& b) {
    TimelineLayout l;
    const double left = b.left() + l.labelWidth;
    const double w = std::max(10.0, b.width() - l.labelWidth - 8);
    double y = b.top() + 2;
    l.axisRow = QRectF(left, y, w, 22);
    y += 26;
    l.serverLane = QRectF(left, y, w, 28);
    y += 34;
    l.callerLane = QRectF(left, y, w, 28);
    y += 34;
    l.attemptLane = QRectF(left, y, w, 28);
    y += 32;
    l.receiptLane = QRectF(left, y, w, 28);
    y += 34;
    l.legendRow = QRectF(b.left() + 4, y, b.width() - 8, 20);
    y += 22;
    l.keyArea = QRectF(b.left() + 4, y, b.width() - 8, std::max(0.0, b.bottom() - y));
    return l;
}

QString entryKey(const TimelineEntry& e) {
    return QString::number(e.at) + QLatin1Char('|') + qs(e.text);
}

QSet<QString> evidenceKeys(const std::vector<Evidence>& evidence, const std::string& callId) {
    QSet<QString> keys;
    for (const Evidence& e : evidence)
        if (e.callId == callId)
            keys.insert(QString::number(e.at) + QLatin1Char('|') + qs(e.what));
    return keys;
}

void paintTimeline(QPainter& p, const TimelineLayout& l, const CallTimeline& t,
                   const TimeAxis& axis, const QSet<QString>& outlined, const QPalette& pal,
                   const TimelinePaintOptions& options) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = pal.color(QPalette::Mid);
    QFont font = p.font();
    const QFont small = smallFont(font);
    const double x0 = l.serverLane.left();
    const auto X = [&](EpochMillis ms) { return x0 + axis.x(ms); };

    // Lane labels.
    p.setPen(text);
    const auto label = [&](const QRectF& lane, const QString& s) {
        p.drawText(QRectF(lane.left() - l.labelWidth, lane.top(), l.labelWidth - 8, lane.height()),
                   Qt::AlignRight | Qt::AlignVCenter, s);
    };
    label(l.serverLane, QStringLiteral("server record"));
    label(l.callerLane, QStringLiteral("caller view"));
    label(l.attemptLane, QStringLiteral("attempts"));
    label(l.receiptLane, QStringLiteral("receipts"));

    // Time axis and grid, in the display zone, which the label column names.
    p.setFont(small);
    const QFontMetricsF sfm(small);
    label(l.axisRow, zoneLabel(axis.from));
    const TickPlan ticks = ticksFor(axis, sfm);
    // The "now" label takes its place in the axis row: a tick label under it is left out.
    const bool nowShown = options.now != kNoTime && axis.visible(options.now);
    const double nowX = nowShown ? X(options.now) : 0;
    const double nowHalf = QFontMetricsF(small).horizontalAdvance(QStringLiteral("now")) / 2 + 8;
    for (EpochMillis tk = ticks.first; tk < axis.to; tk += ticks.step) {
        const double x = X(tk);
        p.setPen(QPen(grid, 1, Qt::DotLine));
        p.drawLine(QPointF(x, l.axisRow.bottom()), QPointF(x, l.receiptLane.bottom()));
        p.setPen(text);
        const QString s = tickLabel(tk, ticks.format);
        const double w = sfm.horizontalAdvance(s) + 8;
        // Whole labels only: one near an end moves inside rather than being cut.
        const double left = std::clamp(x - w / 2, l.axisRow.left(),
                                       std::max(l.axisRow.left(), l.axisRow.right() + 6 - w));
        if (nowShown && left < nowX + nowHalf && left + w > nowX - nowHalf)
            continue;
        p.drawText(QRectF(left, l.axisRow.top(), w, l.axisRow.height()), Qt::AlignCenter, s);
    }
    p.setFont(font);

    // State bands, clipped to the plot.
    p.save();
    p.setClipRect(l.plot().adjusted(0, 0, 1, 1));
    for (const StateBand& b : t.bands) {
        const QRectF& lane = b.lane == Lane::ServerRecord ? l.serverLane : l.callerLane;
        const double a = std::max(X(b.from), lane.left() - 2);
        const double z = std::min(X(b.to), lane.right() + 2);
        if (z < lane.left() || a > lane.right())
            continue;
        const QRectF r(a, lane.top(), std::max(1.5, z - a), lane.height());
        QColor fill = stateColor(b.state);
        p.setPen(QPen(fill.darker(130), 1));
        p.setBrush(fill);
        p.drawRect(r);
        if (r.width() > 60) {
            p.setPen(Qt::white);
            p.drawText(
                r.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                p.fontMetrics().elidedText(shownText(b.state), Qt::ElideRight, int(r.width() - 8)));
        }
    }

    // Markers: at most one per pixel column and lane (hit-testing still sees
    // all); receipts sharing a column show every version in one label.
    double lastX[2] = {-1e9, -1e9};
    for (std::size_t k = 0; k < t.entries.size(); ++k) {
        const TimelineEntry& e = t.entries[k];
        if (e.lane != Lane::Attempt && e.lane != Lane::Receipt)
            continue;
        if (!axis.visible(e.at) && !(e.lane == Lane::Attempt && e.until != kNoTime &&
                                     e.at < axis.to && e.until >= axis.from))
            continue;
        const int li = e.lane == Lane::Attempt ? 0 : 1;
        const double x = X(e.at), y = laneY(l, e.lane);
        const QColor c = instanceColor(qs(e.instance));
        if (e.lane == Lane::Attempt && e.until != kNoTime && e.until > e.at) {
            p.setPen(QPen(c, 3, Qt::SolidLine, Qt::FlatCap));
            p.drawLine(QPointF(x, y), QPointF(X(e.until), y)); // the execution's duration
        }
        if (std::floor(x) == std::floor(lastX[li]))
            continue;
        lastX[li] = x;
        const bool hollow = e.duplicate;
        p.setPen(QPen(e.lane == Lane::Receipt ? stateColor(e.state) : c.darker(140),
                      e.outOfOrder ? 2.5 : 1.5));
        p.setBrush(hollow ? QBrush(Qt::NoBrush) : QBrush(c));
        drawMarker(p, QPointF(x, y), e.state, e.lane, 6);
        if (e.lane == Lane::Receipt) {
            QStringList versions;
            for (std::size_t j = k; j < t.entries.size(); ++j) {
                const TimelineEntry& r = t.entries[j];
                if (r.lane != Lane::Receipt)
                    continue;
                if (std::floor(X(r.at)) != std::floor(x))
                    break;
                versions << QStringLiteral("v") + QString::number(r.number) +
                                (r.outOfOrder ? QStringLiteral("\u21ba") : QString()) +
                                (r.duplicate ? QStringLiteral("\u00d72") : QString());
            }
            p.setPen(text);
            p.setFont(small);
            p.drawText(QRectF(x - 40, y - 25, 80, 12), Qt::AlignCenter,
                       versions.join(QLatin1Char(' ')));
            p.setFont(font);
        }
        if (outlined.contains(entryKey(e))) {
            p.setPen(QPen(kEvidence, 2.5));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(QRectF(x - 10, y - 11, 20, 22), 4, 4);
        }
    }
    // Evidence among the lane transitions: outline the band start.
    for (const TimelineEntry& e : t.entries) {
        if ((e.lane != Lane::ServerRecord && e.lane != Lane::CallerView) ||
            !outlined.contains(entryKey(e)) || !axis.visible(e.at))
            continue;
        const QRectF& lane = e.lane == Lane::ServerRecord ? l.serverLane : l.callerLane;
        p.setPen(QPen(kEvidence, 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(X(e.at) - 3, lane.top() - 3, 6, lane.height() + 6));
    }
    p.restore();

    // "now" on a call still open: a dashed line across the lanes in the
    // palette's text colour (dark on light, light on dark), named in the axis row.
    if (options.now != kNoTime && axis.visible(options.now)) {
        const double x = X(options.now);
        p.setPen(QPen(text, 1.5, Qt::DashLine, Qt::FlatCap));
        p.drawLine(QPointF(x, l.axisRow.bottom() - 4), QPointF(x, l.receiptLane.bottom()));
        QFont bold = small;
        bold.setBold(true);
        p.setFont(bold);
        const QString s = QStringLiteral("now");
        const double w = QFontMetricsF(bold).horizontalAdvance(s) + 8;
        const double left = std::clamp(x - w / 2, l.axisRow.left(),
                                       std::max(l.axisRow.left(), l.axisRow.right() + 6 - w));
        const QRectF box(left, l.axisRow.top() + 1, w, l.axisRow.height() - 6);
        p.setPen(QPen(text, 1));
        p.setBrush(pal.color(QPalette::Base));
        p.drawRoundedRect(box, 3, 3);
        p.drawText(box, Qt::AlignCenter, s);
        p.setFont(font);
    }

    // Legend: source instances.
    std::vector<std::string> instances; // as stored: the colour is the name's, the label shown
    for (const TimelineEntry& e : t.entries)
        if ((e.lane == Lane::Attempt || e.lane == Lane::Receipt || e.lane == Lane::CallerView) &&
            !e.instance.empty() &&
            std::find(instances.begin(), instances.end(), e.instance) == instances.end())
            instances.push_back(e.instance);
    double lx = l.legendRow.left() + l.labelWidth - 8;
    p.setFont(small);
    if (!instances.empty()) {
        p.setPen(text);
        p.drawText(
            QRectF(l.legendRow.left(), l.legendRow.top(), l.labelWidth - 16, l.legendRow.height()),
            Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("instances"));
    }
    for (const std::string& inst : instances) {
        const QColor c = instanceColor(qs(inst));
        p.setPen(c.darker(140));
        p.setBrush(c);
        p.drawEllipse(QPointF(lx + 5, l.legendRow.center().y()), 4.5, 4.5);
        p.setPen(text);
        const QString shown = shownText(inst); // data: escapes shown, not acted on
        const double w = p.fontMetrics().horizontalAdvance(shown) + 24;
        p.drawText(QRectF(lx + 13, l.legendRow.top(), w, l.legendRow.height()),
                   Qt::AlignVCenter | Qt::AlignLeft, shown);
        lx += w;
    }

    // The key to colours and shapes.
    if (options.key && l.keyArea.height() > 0)
        layoutKey(&p, sfm, l.keyArea, l.labelWidth - 4, keyRows(t, outlined, options.now), &pal);
    p.restore();
}

int timelineEntryAt(const TimelineLayout& l, const CallTimeline& t, const TimeAxis& axis,
                    const QPointF& pos) {
    // Entries are sorted by time: look only at those within the tolerance.
    constexpr double kTolerance = 8;
    const double x = pos.x() - l.serverLane.left();
    const auto byTime = [](const TimelineEntry& e, EpochMillis t) { return e.at < t; };
    const auto first =
        std::lower_bound(t.entries.begin(), t.entries.end(), axis.time(x - kTolerance), byTime);
    const auto last =
        std::lower_bound(first, t.entries.end(), axis.time(x + kTolerance) + 1, byTime);
    int best = -1;
    double bestD = kTolerance;
    for (auto it = first; it != last; ++it) {
        const std::size_t k = static_cast<std::size_t>(it - t.entries.begin());
        const TimelineEntry& e = *it;
        double y;
        if (e.lane == Lane::Attempt || e.lane == Lane::Receipt)
            y = laneY(l, e.lane);
        else
            y = (e.lane == Lane::ServerRecord ? l.serverLane : l.callerLane).center().y();
        if (std::abs(pos.y() - y) > 14)
            continue;
        const double d = std::abs(l.serverLane.left() + axis.x(e.at) - pos.x());
        if (d < bestD) {
            bestD = d;
            best = static_cast<int>(k);
        }
    }
    return best;
}

namespace {
// A group's marks: an execution (red disc on the server lane), a caller
// timeout (amber disc with a clock hand on the caller lane).
void groupMark(QPainter& p, const QPointF& c, bool execution) {
    const QColor fill = execution ? QColor(0xd6, 0x27, 0x28) : QColor(0xff, 0xbb, 0x00);
    p.setPen(QPen(fill.darker(170), 1.5));
    p.setBrush(fill);
    p.drawEllipse(c, 6, 6);
    if (!execution) {
        p.setPen(QPen(Qt::black, 1.2));
        p.drawLine(c, c + QPointF(0, -4));
        p.drawLine(c, c + QPointF(3, 0));
    }
}
} // namespace

QString groupTitle(const CallGroup& g) {
    QString kind = g.kind == "compare"            ? QStringLiteral("compared")
                   : g.kind == "key_rotation"     ? QStringLiteral("key rotation")
                   : g.kind == "callid_rewritten" ? QStringLiteral("callId rewritten in transit")
                                                  : qs(g.kind);
    QString s = kind + QStringLiteral(": ") + QString::number(g.members.size()) +
                QStringLiteral(" callIds");
    if (!g.cause.empty() && g.kind == "key_rotation")
        s += QStringLiteral(" (") + qs(g.cause) + QStringLiteral(")");
    if (!g.tie.empty())
        s += QStringLiteral(", ") + shownText(g.tie);
    return s;
}

TimeAxis fittedGroupAxis(const CallGroup& g, double width) {
    TimeAxis a;
    a.width = width;
    if (g.from != kNoTime)
        a.fitLife(g.from, std::max(g.to, g.from + 1));
    return a;
}

void paintGroupTimeline(QPainter& p, const QRectF& b, const CallGroup& g, const TimeAxis& axis,
                        const QPalette& pal) {
    using L = GroupTimelineLayout;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = pal.color(QPalette::Mid);
    const QFont font = p.font();
    const QFont small = smallFont(font);
    QFont bold = font;
    bold.setBold(true);
    const double x0 = b.left() + L::kLabelWidth;
    const double plotRight = x0 + axis.width;
    const auto X = [&](EpochMillis ms) { return x0 + axis.x(ms); };

    // Title: what the group is and what ties it.
    p.setPen(text);
    p.setFont(bold);
    p.drawText(QRectF(b.left() + 4, b.top(), b.width() - 8, 20), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(bold).elidedText(groupTitle(g), Qt::ElideRight, b.width() - 8));
    const QRectF axisRow(x0, b.top() + 22, axis.width, L::kAxisHeight - 4);
    const double bandsTop = axisRow.bottom() + 4;
    const double bandsBottom = bandsTop + L::kBandHeight * double(g.members.size());

    // Axis and grid in the display zone.
    p.setFont(small);
    const QFontMetricsF sfm(small);
    p.drawText(QRectF(b.left(), axisRow.top(), L::kLabelWidth - 8, axisRow.height()),
               Qt::AlignRight | Qt::AlignVCenter, zoneLabel(axis.from));
    const TickPlan ticks = ticksFor(axis, sfm);
    for (EpochMillis tk = ticks.first; tk < axis.to; tk += ticks.step) {
        const double x = X(tk);
        p.setPen(QPen(grid, 1, Qt::DotLine));
        p.drawLine(QPointF(x, axisRow.bottom()), QPointF(x, bandsBottom));
        p.setPen(text);
        const QString s = tickLabel(tk, ticks.format);
        const double w = sfm.horizontalAdvance(s) + 8;
        const double left =
            std::clamp(x - w / 2, axisRow.left(), std::max(axisRow.left(), axisRow.right() - w));
        p.drawText(QRectF(left, axisRow.top(), w, axisRow.height()), Qt::AlignCenter, s);
    }

    const auto lanesOf = [&](std::size_t k) {
        const double top = bandsTop + L::kBandHeight * double(k) + 14;
        return std::pair<QRectF, QRectF>{QRectF(x0, top, axis.width, 22),
                                         QRectF(x0, top + 26, axis.width, 22)};
    };
    const auto clampX = [&](double x) { return std::clamp(x, x0, plotRight); };
    for (std::size_t k = 0; k < g.members.size(); ++k) {
        const GroupMember& m = g.members[k];
        const auto [server, caller] = lanesOf(k);
        // Labels: the callId (its order in the group), and the lanes.
        p.setFont(bold);
        p.setPen(text);
        const QString id =
            QString::number(k + 1) + QStringLiteral(". ") + shownText(m.timeline.callId);
        // In the label column only: the plot's header row holds the connector's label.
        p.drawText(QRectF(b.left() + 4, server.top() - 14, L::kLabelWidth - 12, 14),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetricsF(bold).elidedText(id, Qt::ElideMiddle, L::kLabelWidth - 12));
        p.setFont(small);
        p.drawText(QRectF(b.left(), server.top(), L::kLabelWidth - 8, server.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("server record"));
        p.drawText(QRectF(b.left(), caller.top(), L::kLabelWidth - 8, caller.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("caller view"));
        // Bands.
        p.save();
        p.setClipRect(
            QRectF(x0, server.top() - 2, axis.width + 1, caller.bottom() - server.top() + 4));
        for (const StateBand& band : m.timeline.bands) {
            const QRectF& lane = band.lane == Lane::ServerRecord ? server : caller;
            const double a = clampX(X(band.from)), z = clampX(X(band.to));
            if (z < lane.left() || a > lane.right())
                continue;
            const QRectF r(a, lane.top(), std::max(1.5, z - a), lane.height());
            const QColor fill = stateColor(band.state);
            p.setPen(QPen(fill.darker(130), 1));
            p.setBrush(fill);
            p.drawRect(r);
            if (r.width() > 70) {
                p.setPen(Qt::white);
                p.drawText(r.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           sfm.elidedText(shownText(band.state), Qt::ElideRight, r.width() - 8));
            }
        }
        p.restore();
        // Marks: each execution on the server lane, each timeout on the caller lane.
        for (const EpochMillis t : m.executions)
            if (axis.visible(t))
                groupMark(p, QPointF(X(t), server.center().y()), true);
        for (const EpochMillis t : m.timeouts)
            if (axis.visible(t))
                groupMark(p, QPointF(X(t), caller.center().y()), false);
        // The connector: from the member before, at this one's first event.
        if (k > 0 && m.firstAt != kNoTime) {
            const auto [prevServer, prevCaller] = lanesOf(k - 1);
            const double x = clampX(X(m.firstAt));
            p.setPen(QPen(kEvidence, 2, Qt::DashLine, Qt::FlatCap));
            p.drawLine(QPointF(x, prevCaller.bottom()), QPointF(x, server.top()));
            QPainterPath arrow;
            arrow.moveTo(x, server.top());
            arrow.lineTo(x - 5, server.top() - 7);
            arrow.lineTo(x + 5, server.top() - 7);
            arrow.closeSubpath();
            p.setPen(Qt::NoPen);
            p.setBrush(kEvidence);
            p.drawPath(arrow);
            QString label = g.kind == "key_rotation"       ? QStringLiteral("new callId")
                            : g.kind == "callid_rewritten" ? QStringLiteral("other name")
                                                           : QString();
            if (!g.tie.empty())
                label += (label.isEmpty() ? QString() : QStringLiteral(", ")) + shownText(g.tie);
            if (!label.isEmpty()) {
                QFont b2 = small;
                b2.setBold(true);
                p.setFont(b2);
                const QFontMetricsF bfm(b2);
                const double w = bfm.horizontalAdvance(label) + 10;
                const double left = std::clamp(x + 6, x0, std::max(x0, plotRight - w));
                const QRectF box(left, prevCaller.bottom() + 2, w, 13);
                p.setPen(QPen(kEvidence, 1));
                p.setBrush(pal.color(QPalette::Base));
                p.drawRoundedRect(box, 3, 3);
                p.setPen(text);
                p.drawText(box, Qt::AlignCenter, label);
                p.setFont(small);
            }
        }
    }
    // The key to the marks.
    p.setFont(small);
    double kx = x0;
    const double ky = bandsBottom + 12;
    const auto keyItem = [&](const QString& label, auto icon) {
        icon(QPointF(kx + 6, ky));
        p.setPen(text);
        const double w = sfm.horizontalAdvance(label) + 22;
        p.drawText(QRectF(kx + 15, ky - 8, w, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
        kx += w + 12;
    };
    keyItem(QStringLiteral("executed"), [&](QPointF c) { groupMark(p, c, true); });
    keyItem(QStringLiteral("caller timeout"), [&](QPointF c) { groupMark(p, c, false); });
    keyItem(QStringLiteral("next callId's first event (what ties them)"), [&](QPointF c) {
        p.setPen(QPen(kEvidence, 2, Qt::DashLine, Qt::FlatCap));
        p.drawLine(QPointF(c.x(), c.y() - 7), QPointF(c.x(), c.y() + 7));
    });
    p.setFont(font);
    p.restore();
}

} // namespace callscope
