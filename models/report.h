#pragma once
// An incident report (SPEC §4.4), independent of its format: the window,
// sources (no credentials), counts by kind and severity, the anomaly table,
// and a section per callId with its timeline, tables and diagnosis.
#include "models/anomaly.h"
#include "models/call_group.h"
#include "models/diagnosis.h"
#include "models/timeline.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace callscope {

struct ReportCall {
    CallTimeline timeline;
    Diagnosis diagnosis;
    std::vector<Anomaly> anomalies;
    std::string resultSnapshot; // the payload, or kRedacted
    // Its group (key rotation, rewritten pair), drawn on one axis in the
    // section of the group's first call in the report; empty when none.
    CallGroup group;
    bool drawsGroup = false;
};

inline constexpr const char* kRedacted = "[redacted: run with --include-payloads to show]";

struct Report {
    std::string title = "callscope incident report";
    EpochMillis from = kNoTime, to = kNoTime, generatedAt = kNoTime;
    std::vector<std::string> sources; // "PostgreSQL host=db dbname=orders user=ro", "Kafka ..."
    std::vector<Anomaly> anomalies;   // most severe first
    std::vector<ReportCall> calls;
    bool payloadsIncluded = false;
    // Where the report was made, "cli" or "gui": a redacted payload's note in
    // PDF and HTML names that surface's way to include payloads (the stored
    // value, and JSON, stay kRedacted).
    std::string surface = "cli";

    // kind -> counts by severity (info, warning, critical)
    std::map<std::string, std::array<int, 3>> countsByKind() const;
};

// The report as one JSON object (structure in the README).
std::string reportJson(const Report& report);

} // namespace callscope
