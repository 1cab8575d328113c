#include "models/dashboard_data.h"

#include <map>
#include <unordered_map>

namespace callscope {

void countCalls(const CallStore& store, const std::vector<Anomaly>& anomalies, EpochMillis now,
                DashboardSnapshot& out) {
    out.recordsByStatus = {};
    out.processingAges = {};
    out.instances.clear();
    std::unordered_map<std::uint32_t, InstanceStats> byInstance;
    for (std::uint32_t i = 0; i < store.size(); ++i) {
        const CallState& call = store.call(i);
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
        std::uint32_t seen[8] = {};
        int nSeen = 0;
        for (const CallEvent& e : store.events(i)) {
            if (e.instance == 0 || (e.type != EventType::Attempt && e.type != EventType::Caller &&
                                    e.type != EventType::Receipt))
                continue;
            InstanceStats& st = byInstance[e.instance];
            (e.type == EventType::Receipt ? st.server : st.caller) = true;
            bool counted = false;
            for (int k = 0; k < nSeen; ++k)
                counted |= seen[k] == e.instance;
            if (!counted && nSeen < 8) {
                seen[nSeen++] = e.instance;
                st.calls++;
            }
            if (e.type == EventType::Caller &&
                static_cast<CallerState>(e.code) == CallerState::AwaitingResponse && e.aux > 1)
                st.retries++;
        }
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
            st.conflicts += a.kind == AnomalyKind::DigestConflict;
            st.anomalies += a.open;
        }
    for (auto& [_, st] : named)
        out.instances.push_back(st);
}

} // namespace callscope
