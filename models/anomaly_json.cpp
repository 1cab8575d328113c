#include "models/anomaly_json.h"

#include <algorithm>

namespace callscope {
namespace {

void sortUnique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

} // namespace

void writeAnomalyFields(JsonWriter& w, AnomalyLine a) {
    sortUnique(a.callIds);
    sortUnique(a.instances);
    sortUnique(a.digests);
    w.field("type", "anomaly")
        .field("kind", toString(a.kind))
        .field("severity", toString(a.severity))
        .field("state", a.state);
    w.key("callIds").strings(a.callIds);
    w.key("instances").strings(a.instances);
    w.key("digests").strings(a.digests);
    w.field("firstEventAt", formatIsoMillis(a.firstEventAt))
        .field("detectedAt", formatIsoMillis(a.detectedAt));
    if (a.resolvedAt != INT64_MIN)
        w.field("resolvedAt", formatIsoMillis(a.resolvedAt));
    if (a.since != INT64_MIN)
        w.field("since", formatIsoMillis(a.since));
    if (!a.cause.empty())
        w.field("cause", a.cause);
    w.field("summary", a.summary);
}

std::string toJsonLine(AnomalyLine a) {
    JsonWriter w;
    w.object();
    writeAnomalyFields(w, std::move(a));
    return w.end().take();
}

} // namespace callscope
