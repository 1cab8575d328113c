// Every JSON output of callscope, pinned byte for byte on fixed inputs: the
// formats the README documents (issue 11: one JSON writer, same bytes).
#include "models/anomaly.h"
#include "models/call_json.h"
#include "models/detection_engine.h"
#include "models/diagnosis.h"
#include "models/json_writer.h"
#include "models/report.h"
#include "models/timeline.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace callscope;

namespace {

constexpr EpochMillis T0 = 1'716'200'000'000; // 2024-05-20T10:13:20Z

// Two callIds for one request (a key rotation), hostile text in an instance.
struct Fixture {
    CallStore store;
    DetectionEngine engine{DetectThresholds{}, DetectionSources{}};
    Fixture() {
        const std::string digest(64, 'c');
        for (int k = 0; k < 2; ++k) {
            const std::string id = "cid-" + std::to_string(k);
            const EpochMillis t = T0 + k * 5000;
            store.add(RecordObservation{id, digest, RecordStatus::Success, "api-1", 0, t, t + 40,
                                        t + 86'400'000});
            AttemptObservation a;
            a.id = k + 1;
            a.callId = id;
            a.digest = digest;
            a.sourceInstance = k ? "api-\"2\"\n\x1b[31m" : "api-1";
            a.traceId = "tr-1";
            a.outcome = AttemptOutcome::Executed;
            a.arrivedAt = t;
            a.finishedAt = t + 30;
            store.add(a);
            CallerObservation c;
            c.callId = id;
            c.state = k ? CallerState::ConfirmedSuccess : CallerState::TimeoutUnknown;
            c.at = t + 50;
            c.instance = "api-1";
            c.attempt = 1;
            c.bizNo = "ORD-\u202e7";
            c.digest = digest;
            store.add(c);
            ReceiptObservation r;
            r.callId = id;
            r.status = RecordStatus::Success;
            r.version = 2;
            r.finishedAt = t + 41;
            r.origin.kafkaTimestamp = t + 42;
            store.add(r);
        }
        engine.evaluateAll(store, T0 + 3'600'000);
    }
};

void expectPinned(const std::string& name, const std::string& got) {
    const std::string path = std::string(CALLSCOPE_SOURCE_DIR) + "/tests/unit/json/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) { // first run: write what is produced, to be committed
        std::ofstream(path, std::ios::binary) << got;
        ADD_FAILURE() << "wrote " << path;
        return;
    }
    const std::string want((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(got, want) << name;
}

} // namespace

TEST(JsonFormats, AnomalyLines) {
    AnomalyLine l;
    l.kind = AnomalyKind::StuckProcessing;
    l.severity = Severity::Critical;
    l.callIds = {"b", "a", "a"};
    l.instances = {"x\ty"};
    l.firstEventAt = T0;
    l.detectedAt = T0 + 1;
    l.summary = "quote \" backslash \\ bidi \u202e zero-width \u200b bad \xff";
    std::string lines = toJsonLine(l) + "\n";
    l.resolvedAt = T0 + 2;
    l.state = "resolved";
    lines += toJsonLine(l) + "\n";
    Fixture f;
    for (const Anomaly& a : f.engine.anomalies())
        lines += toJsonLine(a) + "\n";
    expectPinned("anomalies.jsonl", lines);
}

TEST(JsonFormats, TimelineDiagnosisAndReport) {
    Fixture f;
    std::string out;
    Report r;
    r.from = T0;
    r.to = T0 + 3'600'000;
    r.generatedAt = T0 + 3'700'000;
    r.sources = {"PostgreSQL host=db", "Kafka k:9092"};
    r.anomalies = f.engine.anomalies();
    for (std::uint32_t i = 0; i < f.store.size(); ++i) {
        const CallTimeline t = buildTimeline(f.store, i, T0 + 3'600'000);
        const Diagnosis d = diagnose(f.store, f.engine, i);
        out += timelineJson(t) + "\n" + diagnosisJson(d) + "\n";
        ReportCall c;
        c.timeline = t;
        c.diagnosis = d;
        c.resultSnapshot = i ? kRedacted : "{\"ok\":true}";
        for (const Anomaly* a : f.engine.anomaliesOf(t.callId))
            c.anomalies.push_back(*a);
        r.calls.push_back(c);
    }
    out += reportJson(r) + "\n";
    expectPinned("calls-and-report.jsonl", out);
}
