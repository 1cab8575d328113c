#include "models/detectors/detector.h"

#include <algorithm>

namespace callscope {

std::string anomalyKey(AnomalyKind kind, const std::string& subject) {
    return std::string(toString(kind)) + '\x1f' + subject;
}

bool executes(const CallEvent& e) {
    return e.type == EventType::Attempt &&
           (e.code == static_cast<std::uint8_t>(AttemptOutcome::Executed) ||
            e.code == static_cast<std::uint8_t>(AttemptOutcome::Reoccupied));
}

bool isCallerTerminal(std::uint8_t code) {
    return isTerminal(static_cast<CallerState>(code));
}

bool isCallerWaiting(std::uint8_t code) {
    const auto s = static_cast<CallerState>(code);
    return s == CallerState::TimeoutUnknown || s == CallerState::AwaitingReceipt;
}

RecordStatus confirmedStatus(std::uint8_t callerCode) {
    return static_cast<CallerState>(callerCode) == CallerState::ConfirmedSuccess
               ? RecordStatus::Success
               : RecordStatus::Failed;
}

EpochMillis firstEventAt(const CallStore& s, std::uint32_t i) {
    std::int32_t first = INT32_MAX;
    for (const CallEvent& e : s.events(i))
        first = std::min(first, e.dt);
    return s.timeOf(s.call(i), first == INT32_MAX ? 0 : first);
}

CallFacts::CallFacts(const CallStore& s, std::uint32_t i, EpochMillis at, const DetectThresholds& t,
                     const DetectionSources& src, const Coverage& cov,
                     const std::unordered_map<std::string, std::size_t>& kept)
    : store(s), call(i), state(s.call(i)), events(s.events(i)), now(at), thresholds(t),
      sources(src), coverage(cov), updatedAt(s.timeOf(state, state.updated)),
      firstSource(s.instance(state.firstSource)), m_kept(kept) {
    for (std::size_t a = 0; a < events.size(); ++a) {
        const CallEvent& e = events[a];
        if (e.type != EventType::Receipt)
            continue;
        if (isTerminal(static_cast<RecordStatus>(e.code)))
            terminalReceipts |= 1u << e.code;
        for (std::size_t b = 0; b < a && !clashingVersion; ++b)
            if (events[b].type == EventType::Receipt && events[b].aux == e.aux &&
                events[b].code != e.code)
                clashingVersion = e.aux;
        const EpochMillis t = timeOf(e.dt);
        if (firstReceiptAt == kNoTime || t < firstReceiptAt)
            firstReceiptAt = t;
    }
}

const std::string& CallFacts::callId() const {
    if (m_callId.empty())
        m_callId = store.callId(call);
    return m_callId;
}

bool CallFacts::kept(AnomalyKind kind) const {
    return !m_kept.empty() && m_kept.count(anomalyKey(kind, callId()));
}

Finding CallFacts::single(AnomalyKind kind, Severity severity) const {
    Finding f;
    f.kind = kind;
    f.severity = severity;
    f.subject = callId();
    f.callIds = {callId()};
    return f;
}

Evidence CallFacts::evidence(const CallEvent& e) const {
    return Evidence{callId(), timeOf(e.dt), describeEvent(store, call, e)};
}

void CallFacts::addOwnDigest(Finding& f) const {
    if (state.digest)
        f.digests.push_back(store.digest(state.digest));
}

std::string describeEvent(const CallStore& s, std::uint32_t call, const CallEvent& e) {
    const std::string inst = s.instance(e.instance);
    const std::string digest = shortDigest(s.digest(s.eventDigest(call, e)));
    std::string out;
    switch (e.type) {
    case EventType::Record:
        out = "record " + std::string(toString(static_cast<RecordStatus>(e.code))) +
              " (lock_version " + std::to_string(e.aux) + ")";
        break;
    case EventType::Attempt:
        out = "attempt " + std::string(toString(static_cast<AttemptOutcome>(e.code))) + " from " +
              (inst.empty() ? "?" : inst);
        if (e.aux == kNoDt && executes(e))
            out += ", unfinished";
        else if (e.aux != kNoDt)
            out += ", took " +
                   std::to_string(std::max<std::int64_t>(0, std::int64_t(e.aux) - e.dt)) + " ms";
        break;
    case EventType::Receipt:
        out = "receipt v" + std::to_string(e.aux) + " " +
              std::string(toString(static_cast<RecordStatus>(e.code)));
        if (!inst.empty())
            out += " from " + inst;
        if (e.flags & DuplicateReceipt)
            out += " (duplicate)";
        if (e.flags & OutOfOrderReceipt)
            out += " (out of order)";
        break;
    case EventType::Caller:
        out = "caller " + (inst.empty() ? std::string("?") : inst) + " " +
              std::string(toString(static_cast<CallerState>(e.code)));
        if (e.aux > 0)
            out += " (attempt " + std::to_string(e.aux) + ")";
        break;
    }
    if (!digest.empty())
        out += ", digest " + digest;
    return out;
}

} // namespace callscope
