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
