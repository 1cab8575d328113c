#pragma once
// One callId's merged timeline (SPEC §2): the server-record lane and the
// caller-view lane as state bands on one time axis, attempt and receipt
// markers, in time order. Plain data for the CLI, the views and reports.
#include "models/call_store.h"

#include <string>
#include <vector>

namespace callscope {

enum class Lane : std::uint8_t { ServerRecord, CallerView, Attempt, Receipt };
std::string_view toString(Lane lane);

struct TimelineEntry {
    EpochMillis at = kNoTime;
    Lane lane{};
    std::string state; // RecordStatus / CallerState / AttemptOutcome / receipt status word
    std::string instance;
    std::string digest;
    int number = 0; // attempt number (caller), version (receipt), lock_version (record)
    EpochMillis until = kNoTime; // attempt finished_at
    bool duplicate = false, outOfOrder = false;
    std::string text; // readable, as in evidence
};

struct StateBand {
    Lane lane{};
    std::string state; // incl. "ABSENT" and "EXPIRED" for the server record
    EpochMillis from = kNoTime, to = kNoTime;
};

struct RecordSummary {
    bool present = false;
    std::string status, digest, firstSource;
    int lockVersion = 0;
    EpochMillis createdAt = kNoTime, updatedAt = kNoTime, expireAt = kNoTime;
};

struct CallTimeline {
    std::string callId;
    std::string bizNo;
    RecordSummary record;
    std::vector<TimelineEntry> entries; // by time
    std::vector<StateBand> bands;
    EpochMillis from = kNoTime, to = kNoTime;
};

// `now` closes the last bands of calls still in progress.
CallTimeline buildTimeline(const CallStore& store, std::uint32_t call, EpochMillis now);

} // namespace callscope
