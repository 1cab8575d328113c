#include "models/timeline.h"

#include "models/detection_engine.h"

#include <algorithm>

namespace callscope {

std::string_view toString(Lane lane) {
    switch (lane) {
    case Lane::ServerRecord:
        return "server";
    case Lane::CallerView:
        return "caller";
    case Lane::Attempt:
        return "attempt";
    case Lane::Receipt:
        return "receipt";
    }
    return "?";
}

CallTimeline buildTimeline(const CallStore& s, std::uint32_t i, EpochMillis now) {
    const CallState& c = s.call(i);
    CallTimeline t;
    t.callId = s.callId(i);
    t.bizNo = s.bizNo(c.bizNo);
    if (c.hasRecord()) {
        t.record.present = true;
        t.record.status = std::string(toString(c.recordStatus()));
        t.record.digest = s.digest(c.digest);
        t.record.firstSource = s.instance(c.firstSource);
        t.record.lockVersion = c.lockVersion;
        t.record.createdAt = s.timeOf(c, c.created);
        t.record.updatedAt = s.timeOf(c, c.updated);
        t.record.expireAt = s.expireAt(c);
    }
    for (const CallEvent& e : s.events(i)) {
        TimelineEntry x;
        x.at = s.timeOf(c, e.dt);
        x.instance = s.instance(e.instance);
        x.digest = s.digest(s.eventDigest(i, e));
        x.text = describeEvent(s, i, e);
        switch (e.type) {
        case EventType::Record:
            x.lane = Lane::ServerRecord;
            x.state = std::string(toString(static_cast<RecordStatus>(e.code)));
            x.number = e.aux;
            break;
        case EventType::Attempt:
            x.lane = Lane::Attempt;
            x.state = std::string(toString(static_cast<AttemptOutcome>(e.code)));
            x.until = s.timeOf(c, e.aux);
            break;
        case EventType::Receipt:
            x.lane = Lane::Receipt;
            x.state = std::string(toString(static_cast<RecordStatus>(e.code)));
            x.number = e.aux;
            x.duplicate = e.flags & DuplicateReceipt;
            x.outOfOrder = e.flags & OutOfOrderReceipt;
            break;
        case EventType::Caller:
            x.lane = Lane::CallerView;
            x.state = std::string(toString(static_cast<CallerState>(e.code)));
            x.number = e.aux;
            break;
        }
        t.entries.push_back(std::move(x));
    }
    std::stable_sort(t.entries.begin(), t.entries.end(),
                     [](const TimelineEntry& a, const TimelineEntry& b) { return a.at < b.at; });
    if (!t.entries.empty()) {
        t.from = t.entries.front().at;
        t.to = std::max(t.entries.back().at, now);
    }

    // Server-record lane: ABSENT until created_at, then each observed status;
    // EXPIRED after expire_at. Only the latest incarnation's creation is known.
    if (t.record.present) {
        std::vector<std::pair<EpochMillis, std::string>> marks;
        marks.emplace_back(t.record.createdAt, "PROCESSING");
        for (const TimelineEntry& x : t.entries)
            if (x.lane == Lane::ServerRecord && x.at >= t.record.createdAt)
                marks.emplace_back(x.at, x.state);
        std::stable_sort(marks.begin(), marks.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        if (t.from != kNoTime && t.from < t.record.createdAt)
            t.bands.push_back({Lane::ServerRecord, "ABSENT", t.from, t.record.createdAt});
        const EpochMillis end =
            t.record.expireAt != kNoTime ? std::min(t.to, t.record.expireAt) : t.to;
        for (std::size_t k = 0; k < marks.size(); ++k) {
            const EpochMillis from = marks[k].first;
            const EpochMillis to = k + 1 < marks.size() ? marks[k + 1].first : end;
            if (to < from)
                continue;
            if (!t.bands.empty() && t.bands.back().lane == Lane::ServerRecord &&
                t.bands.back().state == marks[k].second)
                t.bands.back().to = to; // the same status observed again
            else
                t.bands.push_back({Lane::ServerRecord, marks[k].second, from, to});
        }
        if (t.record.expireAt != kNoTime && t.to > t.record.expireAt)
            t.bands.push_back({Lane::ServerRecord, "EXPIRED", t.record.expireAt, t.to});
    } else if (t.from != kNoTime) {
        t.bands.push_back({Lane::ServerRecord, "ABSENT", t.from, t.to});
    }
    // Caller-view lane: each transition holds until the next.
    std::vector<const TimelineEntry*> caller;
    for (const TimelineEntry& x : t.entries)
        if (x.lane == Lane::CallerView)
            caller.push_back(&x);
    for (std::size_t k = 0; k < caller.size(); ++k)
        t.bands.push_back({Lane::CallerView, caller[k]->state, caller[k]->at,
                           k + 1 < caller.size() ? caller[k + 1]->at : t.to});
    return t;
}

} // namespace callscope
