#include "models/report.h"

#include "models/call_json.h"

namespace callscope {

std::map<std::string, std::array<int, 3>> Report::countsByKind() const {
    std::map<std::string, std::array<int, 3>> counts;
    for (const Anomaly& a : anomalies)
        counts[std::string(toString(a.kind))][static_cast<std::size_t>(a.severity)]++;
    return counts;
}

std::string reportJson(const Report& r) {
    const auto time = [](EpochMillis t) {
        return t == kNoTime ? std::string("null") : jsonQuote(formatIsoMillis(t));
    };
    std::string j = R"({"type":"report","title":)" + jsonQuote(r.title) + R"(,"window":{"from":)" +
                    time(r.from) + R"(,"to":)" + time(r.to) + R"(},"generatedAt":)" +
                    time(r.generatedAt) + R"(,"payloadsIncluded":)" +
                    (r.payloadsIncluded ? "true" : "false") + R"(,"sources":[)";
    for (std::size_t i = 0; i < r.sources.size(); ++i)
        j += std::string(i ? "," : "") + jsonQuote(r.sources[i]);
    j += R"(],"counts":{)";
    bool first = true;
    for (const auto& [kind, c] : r.countsByKind()) {
        j += std::string(first ? "" : ",") + jsonQuote(kind) + R"(:{"info":)" + std::to_string(c[0]) +
             R"(,"warning":)" + std::to_string(c[1]) + R"(,"critical":)" + std::to_string(c[2]) + "}";
        first = false;
    }
    j += R"(},"anomalies":[)";
    for (std::size_t i = 0; i < r.anomalies.size(); ++i)
        j += std::string(i ? "," : "") + toJsonLine(r.anomalies[i]);
    j += R"(],"calls":[)";
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const ReportCall& c = r.calls[i];
        j += std::string(i ? "," : "") + R"({"callId":)" + jsonQuote(c.timeline.callId) +
             R"(,"timeline":)" + timelineJson(c.timeline) + R"(,"diagnosis":)" +
             diagnosisJson(c.diagnosis) + R"(,"resultSnapshot":)" + jsonQuote(c.resultSnapshot) +
             R"(,"anomalies":[)";
        for (std::size_t k = 0; k < c.anomalies.size(); ++k)
            j += std::string(k ? "," : "") + toJsonLine(c.anomalies[k]);
        j += "]}";
    }
    return j + "]}";
}

} // namespace callscope
