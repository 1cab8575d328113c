#pragma once
// One clock for every view and report (issue 15): times are shown in the
// display zone — UTC by default, or the machine's local zone — and every axis,
// table header and report header names it. The setting is process-wide (the
// GUI thread sets it; views and the report renderer read it).
#include "models/timestamp.h"

#include <QString>

#include <cstdint>

class QDateTime;

namespace callscope {

enum class DisplayZone : std::uint8_t { Utc, Local };

void setDisplayZone(DisplayZone zone);
DisplayZone displayZone();
// "utc" / "local" and back (QSettings, config, command line); nullopt-like:
// returns false for anything else.
QString zoneKey(DisplayZone zone);
bool parseZoneKey(const QString& key, DisplayZone& zone);

enum class TimeDetail : std::uint8_t { Seconds, Millis };

// "2026-12-03 22:52:24.771" in the display zone ("—" for kNoTime).
QString displayDateTime(EpochMillis t, TimeDetail detail = TimeDetail::Millis);
// "22:52:24.771" (the time of day only).
QString displayTimeOfDay(EpochMillis t, TimeDetail detail = TimeDetail::Millis);
// The zone as axes and headers name it: "UTC", or "UTC−05:00" (local, at `at`).
QString zoneLabel(EpochMillis at = nowMillis());
// QtCharts' QDateTimeAxis always formats in the local zone: the value to plot
// for `t` so that its label reads in the display zone.
qint64 chartMillis(EpochMillis t);
EpochMillis fromChartMillis(qint64 v);

// "3m 05s", "1h 02m", "820 ms", "2d 04h": an age or duration for people.
QString humanDuration(std::int64_t ms);

// An anomaly's summary as shown at `now`: a waiting kind gains how long it
// has waited ("; for 6m 10s since 22:52:24 UTC"), computed when shown, never
// frozen at detection. (Data in the summary is made visible, not escaped for markup.)
QString liveSummary(const struct Anomaly& a, EpochMillis now);

} // namespace callscope
