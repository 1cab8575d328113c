#include "models/call_json.h"

namespace callscope {

std::string timelineJson(const CallTimeline& t) {
    const auto time = [](EpochMillis x) {
        return x == kNoTime ? std::string("null") : jsonQuote(formatIsoMillis(x));
    };
    std::string j = R"({"callId":)" + jsonQuote(t.callId) + R"(,"bizNo":)" + jsonQuote(t.bizNo) +
                    R"(,"record":)";
    if (t.record.present)
        j += R"({"status":)" + jsonQuote(t.record.status) + R"(,"requestDigest":)" +
             jsonQuote(t.record.digest) + R"(,"firstSource":)" + jsonQuote(t.record.firstSource) +
             R"(,"lockVersion":)" + std::to_string(t.record.lockVersion) + R"(,"createdAt":)" +
             time(t.record.createdAt) + R"(,"updatedAt":)" + time(t.record.updatedAt) +
             R"(,"expireAt":)" + time(t.record.expireAt) + "}";
    else
        j += "null";
    j += R"(,"events":[)";
    for (std::size_t k = 0; k < t.entries.size(); ++k) {
        const TimelineEntry& e = t.entries[k];
        j += std::string(k ? "," : "") + R"({"at":)" + time(e.at) + R"(,"lane":)" +
             jsonQuote(toString(e.lane)) + R"(,"state":)" + jsonQuote(e.state) +
             R"(,"instance":)" + jsonQuote(e.instance) + R"(,"digest":)" + jsonQuote(e.digest) +
             R"(,"number":)" + std::to_string(e.number);
        if (e.lane == Lane::Attempt)
            j += R"(,"finishedAt":)" + time(e.until);
        if (e.lane == Lane::Receipt)
            j += std::string(R"(,"duplicate":)") + (e.duplicate ? "true" : "false") +
                 R"(,"outOfOrder":)" + (e.outOfOrder ? "true" : "false");
        j += R"(,"text":)" + jsonQuote(e.text) + "}";
    }
    j += R"(],"bands":[)";
    for (std::size_t k = 0; k < t.bands.size(); ++k) {
        const StateBand& b = t.bands[k];
        j += std::string(k ? "," : "") + R"({"lane":)" + jsonQuote(toString(b.lane)) +
             R"(,"state":)" + jsonQuote(b.state) + R"(,"from":)" + time(b.from) + R"(,"to":)" +
             time(b.to) + "}";
    }
    return j + "]}";
}

std::string diagnosisJson(const Diagnosis& d) {
    std::string j = R"({"verdict":)" + jsonQuote(d.verdict) + R"(,"executions":)" +
                    std::to_string(d.executions) + R"(,"steps":[)";
    for (std::size_t k = 0; k < d.steps.size(); ++k)
        j += std::string(k ? "," : "") + R"({"question":)" + jsonQuote(d.steps[k].question) +
             R"(,"answer":)" + jsonQuote(d.steps[k].answer) + R"(,"decisive":)" +
             (d.steps[k].decisive ? "true" : "false") + "}";
    j += R"(],"siblingCallIds":[)";
    for (std::size_t k = 0; k < d.siblingCallIds.size(); ++k)
        j += std::string(k ? "," : "") + jsonQuote(d.siblingCallIds[k]);
    j += R"(],"evidence":[)";
    for (std::size_t k = 0; k < d.evidence.size(); ++k)
        j += std::string(k ? "," : "") + R"({"callId":)" + jsonQuote(d.evidence[k].callId) +
             R"(,"at":)" + jsonQuote(formatIsoMillis(d.evidence[k].at)) + R"(,"what":)" +
             jsonQuote(d.evidence[k].what) + "}";
    return j + "]}";
}


} // namespace callscope
