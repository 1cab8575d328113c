#pragma once
// Paints one callId's two-lane timeline: the server-record and caller-view
// lanes as state bands on one time axis, attempt and receipt markers coloured
// by source instance, evidence outlined. Shared by the drill-down view and the
// reports, so a report draws exactly what the operator saw.
#include "models/timeline.h"
#include "models/timeline_axis.h"

#include <QRectF>
#include <QSet>
#include <QString>

class QPainter;
class QPalette;

namespace callscope {

struct TimelineLayout {
    QRectF axisRow, serverLane, callerLane, attemptLane, receiptLane, legendRow;
    double labelWidth = 110;
    // The plotting area for a widget of `bounds`.
    static TimelineLayout forRect(const QRectF& bounds);
    QRectF plot() const {
        return QRectF(serverLane.left(), axisRow.top(), serverLane.width(),
                      receiptLane.bottom() - axisRow.top());
    }
};

// Keys of entries to outline ("at|text" of the evidence).
QSet<QString> evidenceKeys(const std::vector<struct Evidence>& evidence, const std::string& callId);
QString entryKey(const TimelineEntry& e);

void paintTimeline(QPainter& p, const TimelineLayout& layout, const CallTimeline& t,
                   const TimeAxis& axis, const QSet<QString>& outlined, const QPalette& palette);

// The entry under a point, or -1 (marker lanes only).
int timelineEntryAt(const TimelineLayout& layout, const CallTimeline& t, const TimeAxis& axis,
                    const QPointF& pos);

} // namespace callscope
