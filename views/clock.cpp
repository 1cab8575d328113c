#include "views/clock.h"

#include "models/anomaly.h"
#include "models/observations.h"
#include "views/palette.h"

#include <QDateTime>
#include <QTimeZone>

#include <atomic>
#include <cstdlib>

namespace callscope {
namespace {

std::atomic<DisplayZone> g_zone{DisplayZone::Utc};

QDateTime inZone(EpochMillis t) {
    return g_zone.load() == DisplayZone::Utc ? QDateTime::fromMSecsSinceEpoch(t, QTimeZone::utc())
                                             : QDateTime::fromMSecsSinceEpoch(t);
}

} // namespace

void setDisplayZone(DisplayZone zone) {
    g_zone = zone;
}

DisplayZone displayZone() {
    return g_zone.load();
}

QString zoneKey(DisplayZone zone) {
    return zone == DisplayZone::Local ? QStringLiteral("local") : QStringLiteral("utc");
}

bool parseZoneKey(const QString& key, DisplayZone& zone) {
    const QString k = key.trimmed().toLower();
    if (k == QLatin1String("utc")) {
        zone = DisplayZone::Utc;
        return true;
    }
    if (k == QLatin1String("local")) {
        zone = DisplayZone::Local;
        return true;
    }
    return false;
}

QString displayDateTime(EpochMillis t, TimeDetail detail) {
    if (t == kNoTime)
        return QStringLiteral("\u2014");
    return inZone(t).toString(detail == TimeDetail::Millis
                                  ? QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")
                                  : QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString displayTimeOfDay(EpochMillis t, TimeDetail detail) {
    if (t == kNoTime)
        return QStringLiteral("\u2014");
    return inZone(t).toString(detail == TimeDetail::Millis ? QStringLiteral("HH:mm:ss.zzz")
                                                           : QStringLiteral("HH:mm:ss"));
}

QString zoneLabel(EpochMillis at) {
    if (g_zone.load() == DisplayZone::Utc)
        return QStringLiteral("UTC");
    const int offset = QDateTime::fromMSecsSinceEpoch(at).offsetFromUtc();
    if (offset == 0)
        return QStringLiteral("UTC (local)");
    const int minutes = std::abs(offset) / 60;
    return QStringLiteral("UTC%1%2:%3")
        .arg(offset < 0 ? QStringLiteral("\u2212") : QStringLiteral("+"))
        .arg(minutes / 60, 2, 10, QLatin1Char('0'))
        .arg(minutes % 60, 2, 10, QLatin1Char('0'));
}

qint64 chartMillis(EpochMillis t) {
    if (g_zone.load() == DisplayZone::Local)
        return t;
    // Local rendering of v shows UTC(v + offset(v)): plot t - offset(t).
    return t - qint64(QDateTime::fromMSecsSinceEpoch(t).offsetFromUtc()) * 1000;
}

EpochMillis fromChartMillis(qint64 v) {
    if (g_zone.load() == DisplayZone::Local)
        return v;
    return v + qint64(QDateTime::fromMSecsSinceEpoch(v).offsetFromUtc()) * 1000;
}

QString liveSummary(const Anomaly& a, EpochMillis now) {
    QString s = shownText(a.summary);
    if (a.since == kNoTime)
        return s;
    const EpochMillis end = a.open || a.resolvedAt == kNoTime ? now : a.resolvedAt;
    // The time of day alone when the wait began the day it is shown, else the date too.
    const bool sameDay = inZone(a.since).date() == inZone(now).date();
    return s + (a.open ? QStringLiteral("; for ") : QStringLiteral("; lasted ")) +
           humanDuration(end - a.since) + QStringLiteral(" since ") +
           (sameDay ? displayTimeOfDay(a.since, TimeDetail::Seconds)
                    : displayDateTime(a.since, TimeDetail::Seconds)) +
           QLatin1Char(' ') + zoneLabel(a.since);
}

QString humanDuration(std::int64_t ms) {
    if (ms < 0)
        ms = 0;
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    const std::int64_t s = ms / 1000;
    const auto two = [](std::int64_t v) {
        return QStringLiteral("%1").arg(v, 2, 10, QLatin1Char('0'));
    };
    if (s < 60)
        return QStringLiteral("%1.%2 s").arg(s).arg((ms % 1000) / 100);
    if (s < 3600)
        return QStringLiteral("%1m %2s").arg(s / 60).arg(two(s % 60));
    if (s < 86400)
        return QStringLiteral("%1h %2m").arg(s / 3600).arg(two(s / 60 % 60));
    return QStringLiteral("%1d %2h").arg(s / 86400).arg(two(s / 3600 % 24));
}

} // namespace callscope
