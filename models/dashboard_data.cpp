#include "models/dashboard_data.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

namespace callscope {

namespace {
// `word` in `text` as a whole word ("node-1" is not in "from node-12").
bool namesWord(std::string_view text, std::string_view word) {
    const auto edge = [](char c) { return c == ' ' || c == '(' || c == ')' || c == ','; };
    for (std::size_t at = text.find(word); at != std::string_view::npos;
         at = text.find(word, at + 1)) {
        const std::size_t end = at + word.size();
        if ((at == 0 || edge(text[at - 1])) && (end == text.size() || edge(text[end])))
            return true;
    }
    return false;
}
} // namespace

namespace {

// Each act of an instance on a call (an attempt, a caller event, a receipt):
// `first` the first of that instance on it, `retry` a send beyond the first.
template <typename Each> void eachAct(std::span<const CallEvent> events, Each each) {
    std::uint32_t seen[8] = {};
    int nSeen = 0;
    for (const CallEvent& e : events) {
        if (e.instance == 0 || (e.type != EventType::Attempt && e.type != EventType::Caller &&
                                e.type != EventType::Receipt))
            continue;
        bool counted = false;
        for (int k = 0; k < nSeen; ++k)
            counted |= seen[k] == e.instance;
        if (!counted && nSeen < 8)
            seen[nSeen++] = e.instance;
        const bool retry = e.type == EventType::Caller &&
                           static_cast<CallerState>(e.code) == CallerState::AwaitingResponse &&
                           e.aux > 1;
        each(e, !counted && seen[nSeen - 1] == e.instance, retry);
    }
}

} // namespace

PackedCallTally::PackedCallTally(Millis horizon)
    : m_stepMs(std::max<std::int64_t>(1, horizon.count() / 3'600'000) * 1000) {}

EpochMillis PackedCallTally::earliest() const {
    EpochMillis t = kNoTime;
    for (const auto& [_, in] : m_instances)
        if (!in.bySecond.empty())
            t = std::min(t == kNoTime ? INT64_MAX : t, in.bySecond.begin()->first * m_stepMs);
    return t;
}

void PackedCallTally::add(const CallState& call, std::span<const CallEvent> events, int sign) {
    m_calls += sign;
    if (call.hasRecord())
        m_records[static_cast<std::size_t>(call.recordStatus())] += sign;
    eachAct(events, [&](const CallEvent& e, bool first, bool retry) {
        Instance& in = m_instances[e.instance];
        (e.type == EventType::Receipt ? in.serverActs : in.callerActs) += sign;
        if (!first && !retry)
            return;
        const EpochMillis t = call.base() + e.dt;
        const std::int64_t step = t >= 0 ? t / m_stepMs : (t - m_stepMs + 1) / m_stepMs;
        auto it = in.bySecond.try_emplace(step).first;
        if (first) {
            in.calls += sign;
            it->second[0] += sign;
        }
        if (retry) {
            in.retries += sign;
            it->second[1] += sign;
        }
        if (it->second[0] == 0 && it->second[1] == 0)
            in.bySecond.erase(it);
    });
}

void countCalls(const CallStore& store, const std::vector<Anomaly>& anomalies, EpochMillis now,
                DashboardSnapshot& out, const PackedCallTally* packed) {
    out.recordsByStatus = {};
    out.processingAges = {};
    out.instances.clear();
    std::unordered_map<std::uint32_t, InstanceStats> byInstance;
    // The lanes' span: the oldest call held, a day back at most, a minute at least.
    EpochMillis from = now - 60'000;
    for (std::uint32_t i = 0; i < store.size(); ++i)
        from = std::min(from, store.call(i).base());
    // (Frozen calls, live: final and healthy, packed; the first frozen began
    // about the earliest.)
    if (packed) {
        if (const EpochMillis t = packed->earliest(); t != kNoTime)
            from = std::min(from, t);
    } else {
        store.forEachFrozen([&](std::string_view, const CallState& c,
                                std::span<const CallEvent>) { from = std::min(from, c.base()); },
                            1);
    }
    from = std::max(from, now - 24 * 3'600'000);
    const EpochMillis span = now - from + 1;
    out.laneFrom = from;
    out.laneTo = now + 1;
    const auto bucketOf = [&](EpochMillis t) -> std::ptrdiff_t {
        if (t < from || t > now) // before the span, or a clock ahead of ours
            return -1;
        return static_cast<std::ptrdiff_t>((t - from) * std::int64_t(kLaneBuckets) / span);
    };
    const auto bump = [](std::vector<std::uint16_t>& lane, std::ptrdiff_t b, std::int64_t n = 1) {
        if (b < 0 || n <= 0)
            return;
        if (lane.empty())
            lane.assign(kLaneBuckets, 0);
        auto& x = lane[static_cast<std::size_t>(b)];
        x = static_cast<std::uint16_t>(std::min<std::int64_t>(x + n, 65535));
    };
    const auto count = [&](const CallState& call, std::span<const CallEvent> events) {
        if (call.hasRecord()) {
            out.recordsByStatus[static_cast<int>(call.recordStatus())]++;
            if (call.recordStatus() == RecordStatus::Processing) {
                const EpochMillis age = now - store.timeOf(call, call.updated);
                std::size_t b = 0;
                while (b < kAgeBucketLimits.size() && age >= kAgeBucketLimits[b])
                    ++b;
                out.processingAges[b]++;
            }
        }
        eachAct(events, [&](const CallEvent& e, bool first, bool retry) {
            InstanceStats& st = byInstance[e.instance];
            (e.type == EventType::Receipt ? st.server : st.caller) = true;
            if (first) {
                st.calls++;
                bump(st.callsOverTime, bucketOf(call.base() + e.dt));
            }
            if (retry) {
                st.retries++;
                bump(st.retriesOverTime, bucketOf(call.base() + e.dt));
            }
        });
    };
    for (std::uint32_t i = 0; i < store.size(); ++i)
        count(store.call(i), store.events(i));
    if (packed) {
        // (A packed call is final: its record, when read, is terminal.)
        for (std::size_t k = 0; k < out.recordsByStatus.size(); ++k)
            out.recordsByStatus[k] += static_cast<int>(packed->m_records[k]);
        for (const auto& [id, in] : packed->m_instances) {
            if (in.calls == 0 && in.retries == 0 && in.callerActs == 0 && in.serverActs == 0)
                continue;
            InstanceStats& st = byInstance[id];
            st.calls += static_cast<int>(in.calls);
            st.retries += static_cast<int>(in.retries);
            st.caller |= in.callerActs > 0;
            st.server |= in.serverActs > 0;
            for (const auto& [step, n] : in.bySecond) {
                const EpochMillis t = step * packed->m_stepMs;
                const std::ptrdiff_t b =
                    t + packed->m_stepMs - 1 < from ? -1 : bucketOf(std::max(t, from));
                bump(st.callsOverTime, b, n[0]);
                bump(st.retriesOverTime, b, n[1]);
            }
        }
    } else {
        store.forEachFrozen([&](std::string_view, const CallState& c,
                                std::span<const CallEvent> e) { count(c, e); });
    }
    std::map<std::string, InstanceStats> named;
    for (auto& [id, st] : byInstance) {
        st.instance = store.instance(id);
        named[st.instance] = st;
    }
    for (const Anomaly& a : anomalies)
        for (const std::string& inst : a.instances) {
            InstanceStats& st = named[inst];
            st.instance = inst;
            st.duplicateCallers += a.kind == AnomalyKind::DuplicateCaller;
            if (a.kind == AnomalyKind::DuplicateCaller) {
                // When this instance came in: its first act in the evidence.
                EpochMillis at = a.firstEventAt;
                for (const Evidence& e : a.evidence)
                    if (namesWord(e.what, inst)) {
                        at = e.at;
                        break;
                    }
                if (st.duplicates.size() < kMaxLaneMarks)
                    st.duplicates.push_back({at, a.cause == "migration"});
            }
            st.conflicts += a.kind == AnomalyKind::DigestConflict;
            st.anomalies += a.open;
        }
    for (auto& [_, st] : named)
        out.instances.push_back(st);
}

} // namespace callscope
