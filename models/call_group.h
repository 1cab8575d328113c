#pragma once
// Several callIds on one time axis (SPEC issue: the incident on one screen):
// a key-rotation group, a callId rewritten in transit with the server's name
// for it, or callIds an operator picks to compare. Each member keeps its own
// two-lane timeline; the group says what ties them (same digest, bizNo or
// traceId) and marks each member's timeouts, executions and first event (for
// a later member: the retry under a new key).
#include "models/detection_engine.h"
#include "models/json_writer.h"
#include "models/timeline.h"

#include <string>
#include <vector>

namespace callscope {

struct GroupMember {
    CallTimeline timeline;
    EpochMillis firstAt = kNoTime;       // its first event: for a later member, the new key
    std::vector<EpochMillis> timeouts;   // caller TIMEOUT_UNKNOWN
    std::vector<EpochMillis> executions; // EXECUTED / REOCCUPIED attempts (or the record alone)
};

struct CallGroup {
    std::string kind;  // "key_rotation", "callid_rewritten", "compare"; "" = no group
    std::string cause; // the anomaly's cause, when it has one
    std::string tie;   // "same digest 9f2c1a03…", "same bizNo ORD-1", "same traceId 4bf9…"
    std::vector<GroupMember> members;         // by first event
    EpochMillis from = kNoTime, to = kNoTime; // every member's life
    bool empty() const { return members.size() < 2; }
};

// The group `call` is in: its callid_rewritten pair, else its key-rotation
// group (as the engine groups it); no members when it is in none.
CallGroup groupOf(const CallStore& store, const DetectionEngine& engine, std::uint32_t call,
                  EpochMillis now);
// The calls an operator picked, tied by what they share (if anything).
CallGroup compareCalls(const CallStore& store, const std::vector<std::uint32_t>& calls,
                       EpochMillis now);

// {"type":"group","kind":…,"cause":…,"tie":…,"callIds":[…],"from":…,"to":…,
//  "members":[{"callId":…,"firstEventAt":…,"timeouts":[…],"executions":[…],"timeline":{…}}]}
void writeGroup(JsonWriter& w, const CallGroup& group);

} // namespace callscope
