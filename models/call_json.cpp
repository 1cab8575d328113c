#include "models/call_json.h"

namespace callscope {

void writeTimeline(JsonWriter& w, const CallTimeline& t) {
    w.object().field("callId", t.callId).field("bizNo", t.bizNo);
    w.key("record");
    if (t.record.present) {
        w.object()
            .field("status", t.record.status)
            .field("requestDigest", t.record.digest)
            .field("firstSource", t.record.firstSource)
            .field("lockVersion", static_cast<std::int64_t>(t.record.lockVersion));
        w.key("createdAt").time(t.record.createdAt);
        w.key("updatedAt").time(t.record.updatedAt);
        w.key("expireAt").time(t.record.expireAt);
        w.end();
    } else {
        w.null();
    }
    w.key("events").array();
    for (const TimelineEntry& e : t.entries) {
        w.object();
        w.key("at").time(e.at);
        w.field("lane", toString(e.lane))
            .field("state", e.state)
            .field("instance", e.instance)
            .field("digest", e.digest)
            .field("number", static_cast<std::int64_t>(e.number));
        if (e.lane == Lane::Attempt)
            w.key("finishedAt").time(e.until);
        if (e.lane == Lane::Receipt)
            w.field("duplicate", e.duplicate).field("outOfOrder", e.outOfOrder);
        w.field("text", e.text).end();
    }
    w.end().key("bands").array();
    for (const StateBand& b : t.bands) {
        w.object().field("lane", toString(b.lane)).field("state", b.state);
        w.key("from").time(b.from);
        w.key("to").time(b.to);
        w.end();
    }
    w.end().end();
}

void writeDiagnosis(JsonWriter& w, const Diagnosis& d) {
    w.object()
        .field("cause", toString(d.cause))
        .field("verdict", d.verdict)
        .field("executions", static_cast<std::int64_t>(d.executions));
    w.key("steps").array();
    for (const DiagnosisStep& step : d.steps)
        w.object()
            .field("question", step.question)
            .field("answer", step.answer)
            .field("decisive", step.decisive)
            .end();
    w.end().key("siblingCallIds").strings(d.siblingCallIds);
    w.key("evidence").array();
    for (const Evidence& e : d.evidence)
        w.object()
            .field("callId", e.callId)
            .field("at", formatIsoMillis(e.at))
            .field("what", e.what)
            .end();
    w.end().end();
}

std::string timelineJson(const CallTimeline& t) {
    JsonWriter w;
    writeTimeline(w, t);
    return w.take();
}

std::string diagnosisJson(const Diagnosis& d) {
    JsonWriter w;
    writeDiagnosis(w, d);
    return w.take();
}

} // namespace callscope
