#include "models/call_group.h"

#include "models/anomaly.h"
#include "models/call_json.h"

#include <algorithm>

namespace callscope {
namespace {

GroupMember memberOf(const CallStore& s, std::uint32_t call, EpochMillis now) {
    GroupMember m;
    m.timeline = buildTimeline(s, call, now);
    m.firstAt = firstEventAt(s, call);
    for (const TimelineEntry& e : m.timeline.entries) {
        if (e.lane == Lane::CallerView && e.state == toString(CallerState::TimeoutUnknown))
            m.timeouts.push_back(e.at);
        if (e.lane == Lane::Attempt && (e.state == toString(AttemptOutcome::Executed) ||
                                        e.state == toString(AttemptOutcome::Reoccupied)))
            m.executions.push_back(e.at);
    }
    // Without the attempt log the record is the proof of one execution.
    if (m.executions.empty() && m.timeline.record.present)
        m.executions.push_back(m.timeline.record.createdAt != kNoTime
                                   ? m.timeline.record.createdAt
                                   : m.timeline.record.updatedAt);
    return m;
}

// What every member shares, said the way the anomalies say it.
std::string tieOf(const CallStore& s, const std::vector<std::uint32_t>& calls) {
    const CallState& first = s.call(calls.front());
    const auto all = [&](auto same) { return std::all_of(calls.begin(), calls.end(), same); };
    if (first.digest && all([&](std::uint32_t c) { return s.call(c).digest == first.digest; }))
        return "same digest " + shortDigest(s.digest(first.digest));
    if (first.bizNo && all([&](std::uint32_t c) { return s.call(c).bizNo == first.bizNo; }))
        return "same bizNo " + s.bizNo(first.bizNo);
    for (const TraceLink* link : s.traceLinksOf(calls.front()))
        if (all([&](std::uint32_t c) {
                return c == calls.front() || c == link->first || c == link->other;
            }))
            return "same traceId " + link->traceId;
    return {};
}

CallGroup build(const CallStore& s, std::vector<std::uint32_t> calls, EpochMillis now) {
    CallGroup g;
    std::sort(calls.begin(), calls.end());
    calls.erase(std::unique(calls.begin(), calls.end()), calls.end());
    if (calls.empty())
        return g;
    g.tie = tieOf(s, calls);
    for (const std::uint32_t c : calls)
        g.members.push_back(memberOf(s, c, now));
    std::sort(g.members.begin(), g.members.end(), [](const GroupMember& a, const GroupMember& b) {
        return a.firstAt != b.firstAt ? a.firstAt < b.firstAt
                                      : a.timeline.callId < b.timeline.callId;
    });
    // Every member's life: its events, executions' ends and record changes
    // (not its bands, which run on to the time the group was built).
    const auto widen = [&](EpochMillis t) {
        if (t == kNoTime)
            return;
        g.from = g.from == kNoTime ? t : std::min(g.from, t);
        g.to = g.to == kNoTime ? t : std::max(g.to, t);
    };
    for (const GroupMember& m : g.members) {
        widen(m.firstAt);
        for (const TimelineEntry& e : m.timeline.entries) {
            widen(e.at);
            widen(e.until);
        }
        widen(m.timeline.record.createdAt);
        widen(m.timeline.record.updatedAt);
    }
    return g;
}

} // namespace

CallGroup groupOf(const CallStore& s, const DetectionEngine& engine, std::uint32_t call,
                  EpochMillis now) {
    const std::string callId = s.callId(call);
    for (const Anomaly* a : engine.anomaliesOf(callId))
        if (a->kind == AnomalyKind::CallIdRewritten) {
            std::vector<std::uint32_t> calls;
            for (const std::string& id : a->callIds)
                if (const std::uint32_t i = s.find(id); i != CallStore::npos)
                    calls.push_back(i);
            CallGroup g = build(s, calls, now);
            g.kind = std::string(toString(a->kind));
            g.cause = a->cause;
            for (const TraceLink* link : s.traceLinksOf(call)) // what makes it one call
                if (std::find(calls.begin(), calls.end(), link->first) != calls.end() &&
                    std::find(calls.begin(), calls.end(), link->other) != calls.end())
                    g.tie = "same traceId " + link->traceId;
            return g.empty() ? CallGroup{} : g;
        }
    const std::vector<std::uint32_t> siblings = engine.siblings(s, call);
    if (siblings.size() < 2)
        return {};
    CallGroup g = build(s, siblings, now);
    g.kind = std::string(toString(AnomalyKind::KeyRotation));
    for (const Anomaly* a : engine.anomaliesOf(callId))
        if (a->kind == AnomalyKind::KeyRotation)
            g.cause = a->cause;
    return g;
}

CallGroup compareCalls(const CallStore& s, const std::vector<std::uint32_t>& calls,
                       EpochMillis now) {
    CallGroup g = build(s, calls, now);
    g.kind = "compare";
    return g;
}

void writeGroup(JsonWriter& w, const CallGroup& g) {
    w.object().field("type", "group").field("kind", g.kind);
    if (!g.cause.empty())
        w.field("cause", g.cause);
    w.field("tie", g.tie);
    std::vector<std::string> ids;
    for (const GroupMember& m : g.members)
        ids.push_back(m.timeline.callId);
    w.key("callIds").strings(ids);
    w.key("from").time(g.from);
    w.key("to").time(g.to);
    w.key("members").array();
    for (const GroupMember& m : g.members) {
        w.object().field("callId", m.timeline.callId);
        w.key("firstEventAt").time(m.firstAt);
        w.key("timeouts").array();
        for (const EpochMillis t : m.timeouts)
            w.time(t);
        w.end().key("executions").array();
        for (const EpochMillis t : m.executions)
            w.time(t);
        w.end().key("timeline");
        writeTimeline(w, m.timeline);
        w.end();
    }
    w.end().end();
}

} // namespace callscope
