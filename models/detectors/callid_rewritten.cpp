// callid_rewritten (SPEC §3): a caller event and a server attempt share a
// traceId under different callIds, the caller's callId never reached the
// server and the server's was never the caller's: something between them (a
// gateway, middleware) wrote its own id over the callId, so the server's
// idempotency check never sees the caller's retries as one call. A callId
// made again in the same trace (both callIds at both ends) is not this: that
// is key_rotation's callid_regenerated.
#include "models/detectors/detector.h"

#include <algorithm>

namespace callscope {
namespace {

struct Sides {
    bool caller = false, server = false;
};

Sides sidesOf(const CallStore& s, std::uint32_t call) {
    Sides out;
    out.server = s.call(call).hasRecord();
    for (const CallEvent& e : s.events(call)) {
        out.caller |= e.type == EventType::Caller;
        out.server |= e.type == EventType::Attempt;
    }
    return out;
}

bool hasAttempt(const CallStore& s, std::uint32_t call) {
    const auto ev = s.events(call);
    return std::any_of(ev.begin(), ev.end(),
                       [](const CallEvent& e) { return e.type == EventType::Attempt; });
}

} // namespace

std::optional<RewrittenPair> rewrittenPair(const CallStore& s, const TraceLink& link) {
    const Sides a = sidesOf(s, link.first), b = sidesOf(s, link.other);
    if (a.caller && !a.server && !b.caller && b.server && hasAttempt(s, link.other))
        return RewrittenPair{link.first, link.other};
    if (b.caller && !b.server && !a.caller && a.server && hasAttempt(s, link.first))
        return RewrittenPair{link.other, link.first};
    return std::nullopt;
}

Finding judgeCallIdRewritten(const CallStore& s, const TraceLink& link, RewrittenPair pair) {
    Finding f;
    f.kind = AnomalyKind::CallIdRewritten;
    f.severity = Severity::Critical;
    const std::string callerId = s.callId(pair.callerSide), serverId = s.callId(pair.serverSide);
    f.subject = callerId;
    f.callIds = {callerId, serverId};
    std::vector<std::string> callerInstances, serverInstances;
    const auto add = [](std::vector<std::string>& v, std::string name) {
        if (!name.empty() && std::find(v.begin(), v.end(), name) == v.end())
            v.push_back(std::move(name));
    };
    for (const CallEvent& e : s.events(pair.callerSide))
        if (e.type == EventType::Caller) {
            add(callerInstances, s.instance(e.instance));
            // The sends are what went astray.
            if (static_cast<CallerState>(e.code) == CallerState::AwaitingResponse)
                f.evidence.push_back(Evidence{callerId, s.timeOf(s.call(pair.callerSide), e.dt),
                                              describeEvent(s, pair.callerSide, e)});
        }
    for (const CallEvent& e : s.events(pair.serverSide))
        if (e.type == EventType::Attempt) {
            add(serverInstances, s.instance(e.instance));
            f.evidence.push_back(Evidence{serverId, s.timeOf(s.call(pair.serverSide), e.dt),
                                          describeEvent(s, pair.serverSide, e)});
        }
    f.instances = callerInstances;
    f.instances.insert(f.instances.end(), serverInstances.begin(), serverInstances.end());
    for (const std::uint32_t c : {pair.callerSide, pair.serverSide})
        if (const std::uint32_t d = s.call(c).digest)
            f.digests.push_back(s.digest(d));
    const auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (const std::string& x : v)
            out += (out.empty() ? "" : ", ") + x;
        return out.empty() ? std::string("?") : out;
    };
    f.cause = std::string(toString(Cause::CallIdRewrittenInTransit));
    f.summary = "traceId " + link.traceId + " left the caller (" + list(callerInstances) +
                ") as callId " + callerId + " and reached the server as " + serverId +
                " (attempts from " + list(serverInstances) +
                "): the callId was replaced in transit, so retries are not recognised";
    return f;
}

} // namespace callscope
