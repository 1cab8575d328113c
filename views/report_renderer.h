#pragma once
// Incident reports as PDF (A4, vector timelines, header and page numbers) and
// self-contained HTML (inline CSS and SVG), painted with the same timeline
// code as the drill-down.
#include "models/report.h"

#include <QSet>
#include <QString>

#include <functional>

namespace callscope {

// Called per callId section; return false to cancel.
using ReportProgress = std::function<bool(int done, int total)>;

// Writes the report as PDF, HTML or JSON by the extension of `path`; the file
// appears whole or not at all. On failure `error` says why.
bool writeReport(const Report& report, const QString& path, QString& error,
                 const ReportProgress& progress = {});
// One callId's timeline as an SVG element.
QString timelineSvg(const CallTimeline& timeline, const QSet<QString>& outlined, double width);
// A group of callIds on one axis (views/timeline_painter.h) as inline SVG.
QString groupSvg(const CallGroup& group, double width);

// A report's default file name, "callscope-<scope>-20261203T225224Z.<extension>":
// `scope` is a callId, "window" or "anomalies", made safe for any file system
// (only [A-Za-z0-9._-], anything else '_'; at most 60 characters; never empty
// or starting with '.'); the time is `at` in UTC whatever the display zone, so
// names sort by time.
QString defaultReportName(const QString& scope, EpochMillis at, const QString& extension);

} // namespace callscope
