#pragma once
// An anomaly of SPEC §3: a stable kind, a severity, the callIds involved and
// the evidence (events) that proves it; open until it stops holding.
#include "models/anomaly_json.h"
#include "models/duration.h"
#include "models/observations.h"

#include <cstdint>
#include <string>
#include <vector>

namespace callscope {

struct Evidence {
    std::string callId;
    EpochMillis at = kNoTime;
    std::string what; // "attempt EXECUTED from order-api-7 (digest 9f2c1a03…)"
};

struct Anomaly {
    std::uint64_t id = 0; // stable for the engine's lifetime
    AnomalyKind kind{};
    Severity severity{};
    bool open = true;
    std::vector<std::string> callIds; // sorted
    std::vector<std::string> instances;
    std::vector<std::string> digests;
    EpochMillis firstEventAt = kNoTime;
    EpochMillis detectedAt = kNoTime;
    EpochMillis changedAt = kNoTime;
    EpochMillis resolvedAt = kNoTime;
    EpochMillis since = kNoTime;    // a waiting kind's wait began (AnomalyLine::since)
    std::string cause;              // AnomalyLine::cause
    std::string summary;            // no ages: surfaces add them when they show it
    std::vector<Evidence> evidence; // by time
    std::string subject; // with the kind, the engine's identity of the anomaly (not shown)

    AnomalyLine toLine() const;
};

// The one order of anomalies everywhere they are listed (scan, watch, reports):
// most severe first, then the earliest, then by kind and callIds, so equal
// rows never come out in an arbitrary order.
bool moreSevere(const Anomaly& a, const Anomaly& b);

// The JSON line of SPEC §4.2 with the evidence appended.
std::string toJsonLine(const Anomaly& a);
// The same object into a writer; watch puts "change" first.
void writeAnomaly(JsonWriter& w, const Anomaly& a, std::string_view change = {});

struct DetectThresholds {
    Millis stuckAfter{5 * 60'000};
    Millis receiptGrace{60'000};
    Millis callerAlertAfter{5 * 60'000};
    Millis keyRotationWindow{2 * 3'600'000};
};

// The summary with the age of a waiting anomaly at `now` ("…, for 6m 10s"):
// what scan, watch and reports print; the dashboard does the same at each repaint.
std::string summaryAt(const Anomaly& a, EpochMillis now);

// "9f2c1a03…" — digests are long; people read the first eight characters.
std::string shortDigest(const std::string& digest);

} // namespace callscope
