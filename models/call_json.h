#pragma once
// JSON of one callId: its merged timeline and its diagnosis (the structure
// `inspect --json` prints and reports embed; documented in the README).
#include "models/diagnosis.h"
#include "models/json_writer.h"
#include "models/timeline.h"

#include <string>

namespace callscope {

std::string timelineJson(const CallTimeline& timeline);
std::string diagnosisJson(const Diagnosis& diagnosis);
// The same into a writer, for documents that embed them.
void writeTimeline(JsonWriter& w, const CallTimeline& timeline);
void writeDiagnosis(JsonWriter& w, const Diagnosis& diagnosis);

} // namespace callscope
