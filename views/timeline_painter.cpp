#include "views/timeline_painter.h"

#include "models/anomaly.h"
#include "views/palette.h"

#include <QPainter>
#include <QPainterPath>
#include <QPalette>

#include <algorithm>
#include <cmath>

namespace callscope {
namespace {

QString timeLabel(EpochMillis t, EpochMillis span) {
    const std::string iso = formatIsoMillis(t); // 2024-05-20T10:29:03.120Z
    if (span < 10'000)
        return qs(iso.substr(11, 12)); // 10:29:03.120
    if (span < 86'400'000)
        return qs(iso.substr(11, 8)); // 10:29:03
    return qs(iso.substr(5, 11)).replace(QLatin1Char('T'), QLatin1Char(' '));
}

// A "nice" tick step near span/8.
EpochMillis tickStep(EpochMillis span) {
    static const EpochMillis steps[] = {
        1,       2,       5,         10,        20,        50,         100,       200,
        500,     1000,    2000,      5000,      10'000,    30'000,     60'000,    120'000,
        300'000, 600'000, 1'800'000, 3'600'000, 7'200'000, 21'600'000, 86'400'000};
    for (const EpochMillis s : steps)
        if (span / s <= 8)
            return s;
    return 86'400'000 * ((span / 8) / 86'400'000 + 1);
}

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

} // namespace

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
                   const TimeAxis& axis, const QSet<QString>& outlined, const QPalette& pal) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = pal.color(QPalette::Mid);
    QFont font = p.font();
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

    // Time axis and grid.
    const EpochMillis span = std::max<EpochMillis>(axis.to - axis.from, 1);
    const EpochMillis step = tickStep(span);
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    p.setFont(small);
    for (EpochMillis tk = (axis.from / step + 1) * step; tk < axis.to; tk += step) {
        const double x = X(tk);
        p.setPen(QPen(grid, 1, Qt::DotLine));
        p.drawLine(QPointF(x, l.axisRow.bottom()), QPointF(x, l.receiptLane.bottom()));
        p.setPen(text);
        p.drawText(QRectF(x - 60, l.axisRow.top(), 120, l.axisRow.height()), Qt::AlignCenter,
                   timeLabel(tk, span));
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
            p.setPen(QPen(QColor(0xff, 0x8c, 0x00), 2.5));
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
        p.setPen(QPen(QColor(0xff, 0x8c, 0x00), 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(X(e.at) - 3, lane.top() - 3, 6, lane.height() + 6));
    }
    p.restore();

    // Legend: source instances.
    std::vector<std::string> instances; // as stored: the colour is the name's, the label shown
    for (const TimelineEntry& e : t.entries)
        if ((e.lane == Lane::Attempt || e.lane == Lane::Receipt || e.lane == Lane::CallerView) &&
            !e.instance.empty() &&
            std::find(instances.begin(), instances.end(), e.instance) == instances.end())
            instances.push_back(e.instance);
    double lx = l.legendRow.left() + l.labelWidth - 8;
    p.setFont(small);
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

} // namespace callscope
