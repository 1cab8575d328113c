#include "models/anomaly.h"

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
    l.summary = summary;
    return l;
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

std::string toJsonLine(const Anomaly& a) {
    std::string line = toJsonLine(a.toLine());
    line.pop_back(); // the closing brace
    line += R"(,"evidence":[)";
    for (std::size_t i = 0; i < a.evidence.size(); ++i) {
        const Evidence& e = a.evidence[i];
        if (i)
            line += ',';
        line += R"({"callId":)" + jsonQuote(e.callId) + R"(,"at":)" +
                (e.at == kNoTime ? std::string("null") : jsonQuote(formatIsoMillis(e.at))) +
                R"(,"what":)" + jsonQuote(e.what) + "}";
    }
    line += "]}";
    return line;
}

std::string shortDigest(const std::string& digest) {
    return digest.size() > 8 ? digest.substr(0, 8) + "\u2026" : digest;
}

} // namespace callscope
