#include "models/anomaly.h"

#include <algorithm>

namespace callscope {

AnomalyLine Anomaly::toLine() const {
    AnomalyLine l;
    l.kind = kind;
    l.severity = severity;
    l.state = open ? "open" : "resolved";
    l.callIds = callIds;
    l.instances = instances;
    l.digests = digests;
    l.firstEventAt = firstEventAt == kNoTime ? detectedAt : firstEventAt;
    l.detectedAt = detectedAt;
    l.resolvedAt = resolvedAt;
    l.since = since;
    l.cause = cause;
    l.summary = summary;
    return l;
}

std::string summaryAt(const Anomaly& a, EpochMillis now) {
    if (a.since == kNoTime)
        return a.summary;
    const EpochMillis end = a.open || a.resolvedAt == kNoTime ? now : a.resolvedAt;
    const std::int64_t age = std::max<std::int64_t>(0, end - a.since);
    const Millis shown{age >= 1000 ? age / 1000 * 1000 : age}; // whole seconds
    return a.summary + (a.open ? "; for " : "; lasted ") + formatDuration(shown) + " since " +
           formatIsoMillis(a.since);
}

bool moreSevere(const Anomaly& a, const Anomaly& b) {
    if (a.severity != b.severity)
        return a.severity > b.severity;
    if (a.firstEventAt != b.firstEventAt)
        return a.firstEventAt < b.firstEventAt;
    if (a.kind != b.kind)
        return a.kind < b.kind;
    if (a.callIds != b.callIds)
        return a.callIds < b.callIds;
    return a.subject < b.subject;
}

void writeAnomaly(JsonWriter& w, const Anomaly& a, std::string_view change) {
    w.object();
    if (!change.empty())
        w.field("change", change);
    writeAnomalyFields(w, a.toLine());
    w.key("evidence").array();
    for (const Evidence& e : a.evidence) {
        w.object().field("callId", e.callId);
        w.key("at").time(e.at);
        w.field("what", e.what).end();
    }
    w.end().end();
}

std::string toJsonLine(const Anomaly& a) {
    JsonWriter w;
    writeAnomaly(w, a);
    return w.take();
}

std::string shortDigest(const std::string& digest) {
    return digest.size() > 8 ? digest.substr(0, 8) + "\u2026" : digest;
}

} // namespace callscope
