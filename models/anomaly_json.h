#pragma once
// The JSON line of one anomaly (SPEC §4.2), as scan/watch print it and as the
// simulator's truth file records what it injected.
#include "models/domain.h"
#include "models/json_writer.h"
#include "models/timestamp.h"

#include <string>
#include <vector>

namespace callscope {

struct AnomalyLine {
    AnomalyKind kind{};
    Severity severity{};
    std::string state = "open";
    std::vector<std::string> callIds; // sorted by toJsonLine
    std::vector<std::string> instances;
    std::vector<std::string> digests;
    EpochMillis firstEventAt = 0;
    EpochMillis detectedAt = 0;
    EpochMillis resolvedAt = INT64_MIN; // written only when set
    // The waiting kinds (stuck_processing, receipt_missing, caller_stuck): the
    // time the wait began, written only when set. Summaries hold no ages:
    // each surface shows how long from here at the time it shows it.
    EpochMillis since = INT64_MIN;
    // What explains it, written only when set: key_rotation's diagnosis cause
    // (key_rotated_after_timeout, callid_regenerated, unknown), duplicate_caller's
    // pattern (migration, concurrent).
    std::string cause;
    std::string summary;
};

// One line of JSON, no trailing newline. callIds, instances and digests are
// written sorted and without repeats.
std::string toJsonLine(AnomalyLine line);
// The same fields into an object the writer has open (for lines that carry more).
void writeAnomalyFields(JsonWriter& w, AnomalyLine line);

} // namespace callscope
