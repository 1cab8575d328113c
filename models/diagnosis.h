#pragma once
// The diagnosis of SPEC §3 for one callId, asked in the spec's order:
// same callId? same digest? window expired before the retry? overlapping
// executions? — then whether the receipt was lost — with the stable cause and
// the evidence that decided it.
#include "models/detection_engine.h"

#include <string>
#include <vector>

namespace callscope {

struct DiagnosisStep {
    std::string question;
    std::string answer;
    bool decisive = false;
};

struct Diagnosis {
    Cause cause = Cause::Unknown; // stable, for scripts; the decisive step says why
    std::string verdict;
    std::vector<DiagnosisStep> steps;
    std::vector<Evidence> evidence;          // what decided it
    std::vector<std::string> siblingCallIds; // key rotation
    int executions = 0;
};

Diagnosis diagnose(const CallStore& store, const DetectionEngine& engine, std::uint32_t call);

} // namespace callscope
