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
    JsonWriter w;
    w.object().field("type", "report").field("title", r.title);
    w.key("window").object();
    w.key("from").time(r.from);
    w.key("to").time(r.to);
    w.end();
    w.key("generatedAt").time(r.generatedAt);
    w.field("payloadsIncluded", r.payloadsIncluded);
    w.key("sources").strings(r.sources);
    w.key("counts").object();
    for (const auto& [kind, c] : r.countsByKind())
        w.key(kind)
            .object()
            .field("info", c[0])
            .field("warning", c[1])
            .field("critical", c[2])
            .end();
    w.end().key("anomalies").array();
    for (const Anomaly& a : r.anomalies)
        writeAnomaly(w, a);
    w.end().key("calls").array();
    for (const ReportCall& c : r.calls) {
        w.object().field("callId", c.timeline.callId);
        w.key("timeline");
        writeTimeline(w, c.timeline);
        w.key("diagnosis");
        writeDiagnosis(w, c.diagnosis);
        w.field("resultSnapshot", c.resultSnapshot);
        if (!c.group.empty()) {
            w.key("group");
            writeGroup(w, c.group);
        }
        w.key("anomalies").array();
        for (const Anomaly& a : c.anomalies)
            writeAnomaly(w, a);
        w.end().end();
    }
    return w.end().end().take();
}

} // namespace callscope
