// The simulated caller: the protocol of SPEC §1 from the calling side, with
// the faults it injects and the truth lines that name them.
#include "sim/caller.h"

#include "models/json_writer.h"
#include "models/timestamp.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <variant>

namespace callscope::sim {

SimCaller::SimCaller(SimContext& ctx, int index)
    : m_ctx(ctx), m_index(index), m_name("order-api-" + std::to_string(index + 1)),
      m_rng(ctx.opt.seed * 7919 + static_cast<std::uint64_t>(index)) {}

void SimCaller::post(CallerMessage m) {
    {
        std::lock_guard lock(m_mutex);
        m_inbox.push_back(std::move(m));
    }
    m_cv.notify_one();
}

std::int64_t SimCaller::run(SteadyTime end, SteadyTime drainEnd, const std::atomic<bool>* stop) {
    const double perSecond = m_ctx.opt.rate / m_ctx.opt.callers;
    std::exponential_distribution<double> gap(perSecond > 0 ? perSecond : 1.0);
    SteadyTime nextNew = SteadyClock::now();
    for (;;) {
        const SteadyTime now = SteadyClock::now();
        const bool stopped = (stop && *stop) || m_ctx.failed;
        const bool generating = !stopped && now < end && perSecond > 0;
        while (generating && nextNew <= now) {
            startCall();
            nextNew += std::chrono::microseconds(static_cast<std::int64_t>(gap(m_rng) * 1e6));
        }
        while (!m_timers.empty() && m_timers.top().due <= now) {
            Timer t = m_timers.top();
            m_timers.pop();
            onTimer(t);
        }
        std::deque<CallerMessage> inbox;
        {
            std::lock_guard lock(m_mutex);
            inbox.swap(m_inbox);
        }
        for (auto& m : inbox)
            std::visit([this](auto& msg) { onMessage(msg); }, m);
        if (!generating && (m_calls.empty() || stopped || now >= drainEnd))
            return static_cast<std::int64_t>(m_calls.size());
        SteadyTime wake = now + std::chrono::milliseconds(50);
        if (generating)
            wake = std::min(wake, nextNew);
        if (!m_timers.empty())
            wake = std::min(wake, m_timers.top().due);
        std::unique_lock lock(m_mutex);
        m_cv.wait_until(lock, wake, [&] { return !m_inbox.empty(); });
    }
}

// -- starting a business action --
Fault SimCaller::drawFault() {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    double x = u(m_rng);
    for (const auto& [kind, rate] : m_ctx.opt.faults) {
        if (x < rate)
            return faultFor(kind);
        x -= rate;
    }
    if (x < m_ctx.opt.regeneratedRate)
        return Fault::CallIdRegenerated;
    x -= m_ctx.opt.regeneratedRate;
    if (x < m_ctx.opt.crashRate)
        return Fault::Crash;
    return Fault::None;
}

std::string SimCaller::newCallId() {
    return "cid-" + m_ctx.runId + "-" + std::to_string(m_index + 1) + "-" +
           std::to_string(++m_seq) + randomHex(m_rng, 4);
}

void SimCaller::startCall() {
    Call call;
    call.fault = drawFault();
    call.callId = newCallId();
    call.bizNo =
        "ORD-" + m_ctx.runId + "-" + std::to_string(m_index + 1) + "-" + std::to_string(m_seq);
    const int amount = std::uniform_int_distribution<int>(100, 999'999)(m_rng);
    call.digest = sha256Hex(call.bizNo + "|EUR|" + std::to_string(amount) + "|" + m_name);
    call.traceId = randomHex(m_rng, 16);
    call.initiatedAt = nowMillis();
    call.businessFails =
        call.fault == Fault::None && std::uniform_real_distribution<double>(0, 1)(m_rng) < 0.05;
    {
        std::lock_guard lock(m_ctx.mutex);
        m_ctx.stats.calls++;
        m_ctx.callOwner[call.callId] = m_index;
    }
    if (call.fault == Fault::OrphanReceipt) {
        // A receipt for a callId that no server ever recorded.
        Request r;
        r.callId = call.callId;
        r.digest = call.digest;
        r.orphanReceiptOnly = true;
        m_ctx.submit(std::move(r));
        m_ctx.addTruth(line(AnomalyKind::OrphanReceipt, Severity::Info, call, {}, {},
                            "injected: receipt for a callId with no record"));
        return;
    }
    if (call.fault == Fault::CallIdRewritten)
        call.siblingCallId = "gw-" + randomHex(m_rng, 16); // what the gateway writes over it
    Call& c = m_calls.emplace(call.callId, std::move(call)).first->second;
    publishState(c, CallerState::Initiated);
    send(c);
    if (c.fault == Fault::CallIdRegenerated) {
        c.followUps++; // the async branch, a moment later
        schedule(c, TimerKind::FollowUp, 30, 0);
    }
}

// -- the protocol --
int SimCaller::processingMsFor(const Call& c, int attempt) {
    const int timeout = static_cast<int>(m_ctx.opt.requestTimeout.count());
    switch (c.fault) {
    case Fault::KeyRotation:
    case Fault::CallerStuck:
        return attempt == 1 ? timeout + 300 : 20;
    case Fault::ConcurrentExecution:
        return attempt == 1 ? timeout + 1500 : 20;
    case Fault::ExpiredReplay:
        return attempt == 1 ? timeout + 100 : 20;
    case Fault::ReceiptMissing:
    case Fault::StateMismatch:
    case Fault::DigestConflict:
    case Fault::DuplicateCaller:
    case Fault::ReceiptRegression:
    case Fault::CallIdRewritten:
    case Fault::EffectMissing:
    case Fault::CallIdRegenerated: // no timeout: that is the point
        return 10;
    default:
        break;
    }
    // Healthy traffic: mostly fast, with a tail that outlives the timeout.
    std::uniform_real_distribution<double> u(0, 1);
    if (u(m_rng) < 0.03)
        return std::uniform_int_distribution<int>(timeout + 50, timeout * 2 + 100)(m_rng);
    return static_cast<int>(std::uniform_int_distribution<int>(5, 60)(m_rng) * m_ctx.opt.workScale);
}

void SimCaller::send(Call& c) {
    c.attempt++;
    c.awaitingAnswer = true;
    publishState(c, CallerState::AwaitingResponse);
    Request r;
    r.callId = c.callId;
    r.digest = c.digest;
    r.source = m_name;
    r.traceId = c.traceId;
    r.bizNo = c.bizNo;
    r.skipEffect = c.fault == Fault::EffectMissing;
    if (c.fault == Fault::CallIdRewritten) {
        r.callId = c.siblingCallId; // the server only ever sees the gateway's id
        r.replyCallId = c.callId;
    }
    r.attempt = c.attempt;
    r.callerIndex = m_index;
    r.processingMs = processingMsFor(c, c.attempt);
    r.businessFails = c.businessFails;
    const bool first = c.attempt == 1;
    r.dieAfterPlaceholder = first && (c.fault == Fault::Stuck || c.fault == Fault::Crash);
    r.brokenPlaceholder = c.fault == Fault::ConcurrentExecution;
    r.dropReceipt = c.fault == Fault::ReceiptMissing;
    r.wrongReceipt = c.fault == Fault::StateMismatch;
    if (first && c.fault == Fault::ExpiredReplay)
        r.ttlMs = 1000;
    r.truthOnOverlap = c.fault == Fault::ConcurrentExecution;
    r.truthOnExecute = !first && c.fault == Fault::ExpiredReplay;
    r.initiatedAt = c.initiatedAt;
    m_ctx.submit(std::move(r));
    schedule(c, TimerKind::ResponseTimeout, m_ctx.opt.requestTimeout.count(), c.attempt);
}

void SimCaller::onTimer(const Timer& t) {
    auto it = m_calls.find(t.callId);
    if (it == m_calls.end())
        return;
    Call& c = it->second;
    switch (t.kind) {
    case TimerKind::ResponseTimeout:
        if (c.terminal || !c.awaitingAnswer || t.attempt != c.attempt)
            return;
        onTimeout(c);
        break;
    case TimerKind::Retry:
        if (c.terminal)
            return;
        if (c.fault == Fault::ExpiredReplay || c.attempt < kMaxAttempts) {
            send(c);
        } else if (c.state != CallerState::AwaitingReceipt) {
            publishState(c, CallerState::AwaitingReceipt);
            schedule(c, TimerKind::Escalate, 4 * m_ctx.opt.staleTimeout.count(), 0);
        }
        break;
    case TimerKind::Escalate:
        if (c.terminal)
            return;
        publishState(c, CallerState::Escalated);
        c.terminal = true;
        if (c.fault == Fault::Stuck)
            m_ctx.addTruth(line(AnomalyKind::StuckProcessing, Severity::Warning, c, {}, {},
                                "injected: server died after its placeholder; caller "
                                "escalated"));
        break;
    case TimerKind::FollowUp:
        c.followUps--;
        followUp(c);
        break;
    }
    finishIfDone(c.callId);
}

void SimCaller::onTimeout(Call& c) {
    c.awaitingAnswer = false;
    {
        std::lock_guard lock(m_ctx.mutex);
        m_ctx.stats.timeouts++;
    }
    publishState(c, CallerState::TimeoutUnknown);
    switch (c.fault) {
    case Fault::KeyRotation: {
        // The classic bug: the timeout is taken as failure and the action
        // is retried under a new callId, so the server executes it twice.
        publishState(c, CallerState::ConfirmedFailed);
        c.terminal = true;
        Call retry;
        retry.callId = newCallId();
        retry.bizNo = c.bizNo;
        retry.digest = c.digest;
        retry.traceId = randomHex(m_rng, 16);
        retry.initiatedAt = nowMillis();
        {
            std::lock_guard lock(m_ctx.mutex);
            m_ctx.callOwner[retry.callId] = m_index;
        }
        AnomalyLine kr = line(AnomalyKind::KeyRotation, Severity::Critical, c, {retry.callId}, {},
                              "injected: timed-out call retried under a new callId; "
                              "both executed",
                              {}, toString(Cause::KeyRotatedAfterTimeout));
        AnomalyLine sm = line(AnomalyKind::StateMismatch, Severity::Critical, c, {}, {},
                              "injected (follows key_rotation): caller confirmed FAILED, "
                              "the server executed it");
        Call& r = m_calls.emplace(retry.callId, std::move(retry)).first->second;
        publishState(r, CallerState::Initiated);
        send(r);
        m_ctx.addTruth(std::move(kr));
        m_ctx.addTruth(std::move(sm));
        return;
    }
    case Fault::CallerStuck:
        publishState(c, CallerState::AwaitingReceipt);
        m_ctx.addTruth(line(AnomalyKind::CallerStuck, Severity::Warning, c, {}, {},
                            "injected: caller hung while awaiting the receipt"));
        c.terminal = true; // the caller process forgot the call: no more events
        c.ignoreReceipts = true;
        return;
    case Fault::ExpiredReplay:
        c.ignoreReceipts = true; // missed the receipt; retries after the record is purged
        schedule(c, TimerKind::Retry, 2500, 0);
        return;
    case Fault::Stuck:
        if (c.attempt >= 2) { // gave up retrying; waits, then escalates before stale
            publishState(c, CallerState::AwaitingReceipt);
            schedule(c, TimerKind::Escalate, m_ctx.opt.staleTimeout.count() / 4, 0);
            return;
        }
        break;
    case Fault::ConcurrentExecution:
        schedule(c, TimerKind::Retry, 100, 0);
        return;
    default:
        break;
    }
    schedule(c, TimerKind::Retry, 300, 0);
}

void SimCaller::onMessage(Response& m) {
    auto it = m_calls.find(m.callId);
    if (it == m_calls.end())
        return;
    Call& c = it->second;
    // An answer to an older send arrives on a connection the caller has closed.
    if (c.terminal || !c.awaitingAnswer || m.attempt != c.attempt)
        return;
    c.awaitingAnswer = false;
    switch (m.kind) {
    case ResponseKind::Done:
        confirm(c, m.status);
        break;
    case ResponseKind::Rejected:
        confirm(c, RecordStatus::Failed);
        break;
    case ResponseKind::InProgress:
        if (c.state != CallerState::AwaitingReceipt)
            publishState(c, CallerState::AwaitingReceipt);
        if (c.fault == Fault::Stuck) {
            schedule(c, TimerKind::Escalate, m_ctx.opt.staleTimeout.count() / 4, 0);
            return;
        }
        schedule(c, TimerKind::Retry, 1000, 0);
        break;
    }
    finishIfDone(c.callId);
}

void SimCaller::onMessage(ReceiptNote& m) {
    auto it = m_calls.find(m.callId);
    if (it == m_calls.end())
        return;
    Call& c = it->second;
    if (c.ignoreReceipts || c.terminal || m.version <= c.highestVersion)
        return; // duplicates, stale versions and anything after a terminal state
    c.highestVersion = m.version;
    if (isTerminal(m.status)) {
        if (c.state == CallerState::TimeoutUnknown)
            publishState(c, CallerState::AwaitingReceipt);
        confirm(c, m.status);
        finishIfDone(c.callId);
    }
}

void SimCaller::confirm(Call& c, RecordStatus s) {
    publishState(c, s == RecordStatus::Success ? CallerState::ConfirmedSuccess
                                               : CallerState::ConfirmedFailed);
    c.terminal = true;
    switch (c.fault) {
    case Fault::ReceiptMissing:
        m_ctx.addTruth(line(AnomalyKind::ReceiptMissing, Severity::Warning, c, {}, {},
                            "injected: the relay dropped the terminal receipt"));
        break;
    case Fault::StateMismatch:
        m_ctx.addTruth(line(AnomalyKind::StateMismatch, Severity::Critical, c, {}, {},
                            "injected: the receipt carries the opposite terminal status"));
        break;
    case Fault::DigestConflict:
    case Fault::DuplicateCaller:
    case Fault::ReceiptRegression:
        c.followUps++;
        schedule(c, TimerKind::FollowUp, 100, 0);
        break;
    case Fault::CallIdRewritten:
        m_ctx.addTruth(line(AnomalyKind::CallIdRewritten, Severity::Critical, c, {c.siblingCallId},
                            {}, "injected: a gateway replaced the callId in transit", {},
                            toString(Cause::CallIdRewrittenInTransit)));
        break;
    case Fault::EffectMissing:
        m_ctx.addTruth(line(AnomalyKind::EffectMissing, Severity::Critical, c, {}, {},
                            "injected: the record turned SUCCESS without the business row", {},
                            toString(Cause::EffectMissing)));
        break;
    default:
        break;
    }
}

void SimCaller::followUp(Call& c) {
    switch (c.fault) {
    case Fault::DigestConflict: {
        // A caller bug: the same callId reused for another request.
        Request r;
        r.callId = c.callId;
        r.digest = sha256Hex(c.bizNo + "|other-request|" + randomHex(m_rng, 8));
        r.source = m_name;
        r.traceId = randomHex(m_rng, 16);
        const std::string otherDigest = r.digest;
        m_ctx.submit(std::move(r));
        m_ctx.addTruth(line(AnomalyKind::DigestConflict, Severity::Warning, c, {}, {otherDigest},
                            "injected: callId reused with another request digest"));
        break;
    }
    case Fault::DuplicateCaller: {
        // Another instance picked up the same job and sent it again.
        const auto& others = m_ctx.callers;
        const std::string other =
            others.size() > 1 ? others[(m_index + 1) % others.size()]->name() : "order-api-shadow";
        Request r;
        r.callId = c.callId;
        r.digest = c.digest;
        r.source = other;
        r.traceId = randomHex(m_rng, 16);
        m_ctx.submit(std::move(r));
        m_ctx.addTruth(line(AnomalyKind::DuplicateCaller, Severity::Warning, c, {}, {},
                            "injected: a second caller instance sent the same callId", other,
                            "concurrent"));
        break;
    }
    case Fault::CallIdRegenerated: {
        // A caller bug: an async branch lost the callId and made a new one
        // for the same request, with no timeout: both are executed.
        Call again;
        again.callId = newCallId();
        again.bizNo = c.bizNo;
        again.digest = c.digest;
        again.traceId = randomHex(m_rng, 16);
        again.initiatedAt = nowMillis();
        again.fault = Fault::CallIdRegenerated;
        again.followUps = 0;
        {
            std::lock_guard lock(m_ctx.mutex);
            m_ctx.callOwner[again.callId] = m_index;
        }
        m_ctx.addTruth(line(AnomalyKind::KeyRotation, Severity::Critical, c, {again.callId}, {},
                            "injected: the callId was made again for the same request, with "
                            "no timeout; both executed",
                            {}, toString(Cause::CallIdRegenerated)));
        Call& r = m_calls.emplace(again.callId, std::move(again)).first->second;
        publishState(r, CallerState::Initiated);
        send(r);
        break;
    }
    case Fault::ReceiptRegression:
        // A caller bug: a confirmed call goes back to waiting for its receipt.
        publishState(c, CallerState::AwaitingReceipt);
        m_ctx.addTruth(line(AnomalyKind::ReceiptRegression, Severity::Warning, c, {}, {},
                            "injected: caller moved from a terminal to a non-terminal state"));
        break;
    default:
        break;
    }
}

void SimCaller::finishIfDone(const std::string& callId) {
    auto it = m_calls.find(callId);
    if (it != m_calls.end() && it->second.terminal && it->second.followUps == 0)
        m_calls.erase(it);
}

// -- helpers --
void SimCaller::schedule(const Call& c, TimerKind kind, std::int64_t afterMs, int attempt) {
    m_timers.push(
        Timer{SteadyClock::now() + std::chrono::milliseconds(afterMs), c.callId, kind, attempt});
}

void SimCaller::publishState(Call& c, CallerState s) {
    c.state = s;
    JsonWriter json;
    json.object()
        .field("callId", c.callId)
        .field("state", toString(s))
        .field("at", formatIsoMillis(nowMillis()))
        .field("instance", m_name)
        .field("attempt", c.attempt)
        .field("bizNo", c.bizNo)
        .field("requestDigest", c.digest)
        .field("traceId", c.traceId)
        .end();
    m_ctx.publishEvent(c.callId, json.text());
}

AnomalyLine SimCaller::line(AnomalyKind kind, Severity sev, const Call& c,
                            std::vector<std::string> moreCallIds,
                            std::vector<std::string> moreDigests, std::string summary,
                            std::string otherInstance, std::string_view cause) const {
    AnomalyLine a;
    a.kind = kind;
    a.severity = sev;
    a.callIds = std::move(moreCallIds);
    a.callIds.push_back(c.callId);
    a.digests = std::move(moreDigests);
    a.digests.push_back(c.digest);
    if (kind != AnomalyKind::OrphanReceipt)
        a.instances.push_back(m_name);
    if (!otherInstance.empty())
        a.instances.push_back(otherInstance);
    a.firstEventAt = c.initiatedAt;
    a.cause = std::string(cause);
    a.summary = std::move(summary);
    return a;
}

} // namespace callscope::sim
