// digest_conflict (SPEC §3): two or more request digests seen for one callId
// (record, attempts, caller events, receipts).
#include "models/detectors/detector.h"

#include <set>

namespace callscope {

Verdict judgeDigestConflict(const CallFacts& call) {
    Verdict v;
    if (call.store.digestCount(call.call) < 2)
        return v;
    Finding f = call.single(AnomalyKind::DigestConflict, Severity::Warning);
    std::set<std::uint32_t> shown;
    for (const CallEvent& e : call.events) {
        const std::uint32_t d = call.store.eventDigest(call.call, e);
        if (d && shown.insert(d).second) {
            f.evidence.push_back(call.evidence(e));
            if (e.type != EventType::Receipt && e.type != EventType::Record)
                f.instances.push_back(call.instance(e));
        }
    }
    const auto digests = call.store.digestsOf(call.call);
    for (const std::uint32_t d : digests)
        f.digests.push_back(call.store.digest(d));
    std::string list;
    for (const auto& d : f.digests)
        list += (list.empty() ? "" : ", ") + shortDigest(d);
    f.summary = std::to_string(digests.size()) + " request digests under one callId: " + list;
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
