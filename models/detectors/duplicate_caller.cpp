// duplicate_caller (SPEC §3): two or more source instances act on one callId
// (the record's first_source, attempts, caller events); the evidence lists
// each instance with its first event, and the cause tells a migration (each
// instance stopped, unfinished, before the next one's first act: a restart
// or a load-balancer switch) from concurrent callers (they overlap, or one
// sent again what another had already seen confirmed).
#include "models/detectors/detector.h"

#include <algorithm>

namespace callscope {

Verdict judgeDuplicateCaller(const CallFacts& call) {
    Verdict v;
    std::uint32_t firstInstance = 0;
    bool several = false;
    for (const CallEvent& e : call.events)
        if ((e.type == EventType::Attempt || e.type == EventType::Caller ||
             e.type == EventType::Record) &&
            e.instance != 0) {
            if (firstInstance == 0)
                firstInstance = e.instance;
            else if (e.instance != firstInstance)
                several = true;
        }
    if (!several)
        return v;
    std::vector<std::pair<std::uint32_t, const CallEvent*>> firstBy; // instance -> first event
    for (const CallEvent& e : call.events) {
        if (e.instance == 0 || (e.type != EventType::Attempt && e.type != EventType::Caller &&
                                e.type != EventType::Record))
            continue;
        const auto it = std::find_if(firstBy.begin(), firstBy.end(),
                                     [&](const auto& p) { return p.first == e.instance; });
        if (it == firstBy.end())
            firstBy.emplace_back(e.instance, &e);
        else if (e.dt < it->second->dt)
            it->second = &e;
    }
    if (firstBy.size() < 2)
        return v;
    Finding f = call.single(AnomalyKind::DuplicateCaller, Severity::Warning);
    std::sort(firstBy.begin(), firstBy.end(),
              [](const auto& a, const auto& b) { return a.second->dt < b.second->dt; });
    // Each instance's last act (attempts and caller events: the record's
    // first_source carries the record's time, not the instance's) and whether
    // it saw the call confirmed.
    bool migration = true;
    for (std::size_t k = 0; k + 1 < firstBy.size() && migration; ++k) {
        const std::uint32_t inst = firstBy[k].first;
        std::int32_t last = firstBy[k].second->dt;
        bool confirmed = false;
        for (const CallEvent& e : call.events)
            if (e.instance == inst &&
                (e.type == EventType::Attempt || e.type == EventType::Caller)) {
                last = std::max(last, e.dt);
                confirmed |= e.type == EventType::Caller && isCallerTerminal(e.code);
            }
        migration = !confirmed && last <= firstBy[k + 1].second->dt;
    }
    f.cause = migration ? "migration" : "concurrent";
    std::string list;
    for (const auto& [inst, e] : firstBy) {
        const std::string name = call.store.instance(inst);
        f.instances.push_back(name);
        Evidence x = call.evidence(*e);
        x.what = name + " first acted: " + x.what;
        f.evidence.push_back(std::move(x));
        list += (list.empty() ? "" : ", ") + name;
    }
    call.addOwnDigest(f);
    f.summary = std::to_string(firstBy.size()) + " caller instances acted on one callId: " + list +
                (migration ? " (migration: each took over after the one before stopped)"
                           : " (concurrent: both sent)");
    v.finding = std::move(f);
    return v;
}

} // namespace callscope
