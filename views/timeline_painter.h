#pragma once
// Paints one callId's two-lane timeline: the server-record and caller-view
// lanes as state bands on one time axis, attempt and receipt markers coloured
// by source instance, evidence outlined, a "now" line on calls still open and
// a key to colours and shapes. Shared by the drill-down view and the reports,
// so a report draws exactly what the operator saw. Times read in the display
// zone (views/clock.h), which the axis names.
#include "models/call_group.h"
#include "models/timeline.h"
#include "models/timeline_axis.h"

#include <QRectF>
#include <QSet>
#include <QString>

#include <utility>

class QFont;
class QPainter;
class QPalette;

namespace callscope {

struct TimelineLayout {
    QRectF axisRow, serverLane, callerLane, attemptLane, receiptLane, legendRow;
    QRectF keyArea; // below the instances' legend: the rest of the bounds
    double labelWidth = 110;
    // The plotting area for a widget of `bounds`.
    static TimelineLayout forRect(const QRectF& bounds);
    QRectF plot() const {
        return QRectF(serverLane.left(), axisRow.top(), serverLane.width(),
                      receiptLane.bottom() - axisRow.top());
    }
};

struct TimelinePaintOptions {
    EpochMillis now = kNoTime; // a dashed "now" line here (timelineNow), none if kNoTime
    bool key = false;          // the key to band colours and marker shapes in keyArea
};

// Keys of entries to outline ("at|text" of the evidence).
QSet<QString> evidenceKeys(const std::vector<struct Evidence>& evidence, const std::string& callId);
QString entryKey(const TimelineEntry& e);

void paintTimeline(QPainter& p, const TimelineLayout& layout, const CallTimeline& t,
                   const TimeAxis& axis, const QSet<QString>& outlined, const QPalette& palette,
                   const TimelinePaintOptions& options = {});

// The entry under a point, or -1 (marker lanes only).
int timelineEntryAt(const TimelineLayout& layout, const CallTimeline& t, const TimeAxis& axis,
                    const QPointF& pos);

// Whether the server record (PROCESSING, not expired) or the caller (not
// confirmed) is still under way: its last band runs to the timeline's now.
bool timelineOpen(const CallTimeline& t);
// The time the timeline was built at (its bands end there) for an open call,
// else kNoTime: where the "now" line goes.
EpochMillis timelineNow(const CallTimeline& t);
// The call's whole life: from the first event to the last of its events, the
// record's last update, attempts' ends and, while open, now.
std::pair<EpochMillis, EpochMillis> timelineLife(const CallTimeline& t);
// An axis `width` pixels wide showing the whole life (TimeAxis::fitLife).
TimeAxis fittedAxis(const CallTimeline& t, double width);

// The height the key needs at `width` (the whole row, label column
// included) in the font the painter uses for it (0 for an empty timeline).
double timelineKeyHeight(const CallTimeline& t, const QSet<QString>& outlined, EpochMillis now,
                         const QFont& font, double width);

// The legend of every band state and mark, for a report to print once: the
// height it takes at `width` in `font`, and painting it into `area`.
double fullKeyHeight(const QFont& font, double width);
void paintFullKey(QPainter& p, const QRectF& area, const QFont& font, const QPalette& pal);

// --- A group of callIds on one axis (drill-down and reports). ---------------
// One band of two lanes (server record over caller view) per callId, in the
// order of their first events; each execution and caller timeout marked and
// labelled; a connector from one member to the next at the later one's first
// event, naming what ties them ("same digest 9f2c1a03…"); a key row below.
struct GroupTimelineLayout {
    static constexpr double kLabelWidth = 190, kAxisHeight = 26, kBandHeight = 74;
    // The height `members` bands take, axis and title row included.
    static double heightFor(std::size_t members) {
        return kAxisHeight + 22 + kBandHeight * double(members) + 24; // + the key row
    }
};
// An axis `width` pixels wide over every member's life.
TimeAxis fittedGroupAxis(const CallGroup& group, double width);
// `bounds` wide; the plot starts kLabelWidth in. The axis is for the plot's width.
void paintGroupTimeline(QPainter& p, const QRectF& bounds, const CallGroup& group,
                        const TimeAxis& axis, const QPalette& palette);
// "key_rotation (cause key_rotated_after_timeout): 2 callIds, same digest 9f2c1a03…"
QString groupTitle(const CallGroup& group);

// A tick label for `t` (exposed for tests): "22:52:24.771", "12-03 22:52",
// "2026-12-03", in the display zone.
QString tickLabel(EpochMillis t, TickFormat format);
// The display zone's offset from UTC at `t`, in ms (0 for UTC).
std::int64_t displayOffsetMs(EpochMillis t);

} // namespace callscope
