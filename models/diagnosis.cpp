#include "models/diagnosis.h"

namespace callscope {
namespace {

const Anomaly* findKind(const std::vector<const Anomaly*>& list, AnomalyKind k) {
    for (const Anomaly* a : list)
        if (a->kind == k)
            return a;
    return nullptr;
}

} // namespace

Diagnosis diagnose(const CallStore& s, const DetectionEngine& engine, std::uint32_t i) {
    Diagnosis d;
    const CallState& c = s.call(i);
    const std::string callId = s.callId(i);
    const auto anomalies = engine.anomaliesOf(callId);
    int reoccupied = 0;
    for (const CallEvent& e : s.events(i)) {
        if (e.type != EventType::Attempt)
            continue;
        const auto o = static_cast<AttemptOutcome>(e.code);
        d.executions += o == AttemptOutcome::Executed || o == AttemptOutcome::Reoccupied;
        reoccupied += o == AttemptOutcome::Reoccupied;
    }
    if (d.executions == 0 && c.hasRecord())
        d.executions = 1; // no attempt log: the record proves one execution

    const auto decide = [&](const Anomaly* a, std::string verdict, Cause cause) {
        d.cause = cause;
        d.verdict = std::move(verdict);
        d.steps.back().decisive = true;
        d.evidence = a->evidence;
    };

    // 1. Same callId?
    d.steps.push_back({"Same callId for every try?", "", false});
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::CallIdRewritten)) {
        for (const std::string& id : a->callIds)
            if (id != callId)
                d.siblingCallIds.push_back(id);
        d.steps.back().answer = "no: one trace carries callId " + a->callIds.front() + " and " +
                                a->callIds.back() + " between caller and server";
        decide(a,
               "CallId rewritten in transit: something between caller and server replaced the "
               "callId, so the server never sees the caller's retries as one call. " +
                   a->summary + ".",
               Cause::CallIdRewrittenInTransit);
        return d;
    }
    for (const std::uint32_t m : engine.siblings(s, i))
        if (m != i)
            d.siblingCallIds.push_back(s.callId(m));
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::KeyRotation);
        a && !d.siblingCallIds.empty()) {
        std::string list;
        for (const auto& id : d.siblingCallIds)
            list += (list.empty() ? "" : ", ") + id;
        d.steps.back().answer = "no: the same request was sent under " +
                                std::to_string(d.siblingCallIds.size() + 1) + " callIds (also " +
                                list + ")";
        const Cause cause =
            a->cause == toString(Cause::KeyRotatedAfterTimeout) ? Cause::KeyRotatedAfterTimeout
            : a->cause == toString(Cause::CallIdRegenerated)    ? Cause::CallIdRegenerated
                                                                : Cause::Unknown;
        const char* story =
            cause == Cause::KeyRotatedAfterTimeout
                ? "Key rotated on retry: the call timed out and the caller retried under a new "
                  "callId, so the server could not recognise the repeat. "
            : cause == Cause::CallIdRegenerated
                ? "CallId made again: the same request went out under a new callId without any "
                  "timeout before it (the callId was lost, e.g. in an async branch), so the "
                  "server could not recognise the repeat. "
                : "The same request came under a new callId, so the server could not recognise "
                  "the repeat; no caller events tell whether the first timed out. ";
        decide(a, story + a->summary + ".", cause);
        return d;
    }
    d.steps.back().answer = "yes: no other callId carries this request's digest or bizNo";

    // 2. Same digest?
    d.steps.push_back({"Same request digest under this callId?", "", false});
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::DigestConflict)) {
        d.steps.back().answer = "no: " + std::to_string(a->digests.size()) + " digests";
        decide(a,
               "Caller bug: this callId was reused for a different request (" +
                   std::to_string(a->digests.size()) +
                   " request digests); the server rejects the other request.",
               Cause::DigestMismatch);
        return d;
    }
    d.steps.back().answer = "yes";

    // 3. Record window expired before the retry?
    d.steps.push_back({"Did the record's window expire before the retry?", "", false});
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::ExpiredReplay)) {
        d.steps.back().answer = "yes";
        decide(a,
               "Idempotency window too short: a retry came after the record's expire_at" +
                   std::string(a->severity == Severity::Critical
                                   ? " and the action was executed again."
                                   : "; it was not executed again."),
               Cause::WindowExpired);
        return d;
    }
    d.steps.back().answer = c.hasRecord() ? "no" : "unknown: no record";

    // 4. Overlapping executions?
    d.steps.push_back({"Did executions overlap?", "", false});
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::ConcurrentExecution)) {
        d.steps.back().answer = "yes";
        decide(a,
               "Atomic placeholder broken: " + std::to_string(d.executions) +
                   " executions ran at once under one callId.",
               Cause::ConcurrentExecution);
        return d;
    }
    d.steps.back().answer = "no";

    // Then: did the business effect happen?
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::EffectMissing)) {
        d.steps.push_back({"Did the business write happen?", "no: the probe found no row", false});
        decide(a,
               "Business effect missing: the record says SUCCESS but the business row is not "
               "there, so every retry is answered \"success\" for an action that left nothing. "
               "The record and the business write must be one transaction.",
               Cause::EffectMissing);
        return d;
    }

    // Then: did the result reach the caller?
    if (const Anomaly* a = findKind(anomalies, AnomalyKind::ReceiptMissing)) {
        d.steps.push_back({"Was the terminal receipt published?", "no", false});
        decide(a,
               "Receipt lost: the record is terminal but no terminal receipt came within the "
               "grace, so the caller is left waiting or retries. " +
                   a->summary + ".",
               Cause::ReceiptLost);
        return d;
    }

    if (!c.hasRecord())
        d.verdict = "No idempotency record for this callId";
    else if (d.executions <= 1) {
        d.cause = Cause::ExecutedOnce;
        d.verdict = "Executed once; no double execution. Retries were answered from the record.";
    } else if (reoccupied > 0)
        d.verdict = "Executed " + std::to_string(d.executions) +
                    " times: a stale PROCESSING was re-occupied (lock_version " +
                    std::to_string(c.lockVersion) +
                    "), the protocol's recovery. Check that the first run did not complete.";
    else
        d.verdict = "Executed " + std::to_string(d.executions) + " times.";
    std::string open;
    for (const Anomaly* a : anomalies)
        if (a->open)
            open += (open.empty() ? "" : ", ") + std::string(toString(a->kind));
    if (!open.empty())
        d.verdict += " Open: " + open + ".";
    for (const Anomaly* a : anomalies)
        d.evidence.insert(d.evidence.end(), a->evidence.begin(), a->evidence.end());
    return d;
}

} // namespace callscope
