#include "models/advice.h"

#include "models/json_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace callscope {

double bucketFloorMs(std::size_t bucket) {
    return bucket == 0 ? 0.0 : std::pow(10.0, double(bucket) / kBucketsPerDecade);
}

std::size_t bucketOf(std::int64_t ms) {
    if (ms <= 1)
        return 0;
    const auto b = static_cast<std::size_t>(std::log10(double(ms)) * kBucketsPerDecade);
    return std::min(b, kHistogramBuckets - 1);
}

namespace {

// Nearest rank: the smallest sample with at least q of them at or below it.
std::int64_t percentile(const std::vector<std::int64_t>& sorted, double q) {
    if (sorted.empty())
        return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * double(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Distribution distributionOf(std::vector<std::int64_t>& samples) {
    Distribution d;
    std::sort(samples.begin(), samples.end());
    d.count = static_cast<std::int64_t>(samples.size());
    if (samples.empty())
        return d;
    d.min = samples.front();
    d.max = samples.back();
    d.p50 = percentile(samples, 0.50);
    d.p90 = percentile(samples, 0.90);
    d.p99 = percentile(samples, 0.99);
    d.p999 = percentile(samples, 0.999);
    for (const std::int64_t s : samples)
        d.histogram[bucketOf(s)]++;
    return d;
}

// A recommendation rounded up to a whole second (a config takes "30s").
std::int64_t roundUpToSecond(double ms) {
    return static_cast<std::int64_t>(std::ceil(ms / 1000.0)) * 1000;
}

std::string safetyText(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

} // namespace

std::string adviceDuration(std::int64_t ms) {
    char buf[48];
    if (ms < 1000)
        std::snprintf(buf, sizeof buf, "%lld ms", static_cast<long long>(ms));
    else if (ms < 60'000)
        std::snprintf(buf, sizeof buf, "%.1f s", double(ms) / 1000.0);
    else if (ms < 3'600'000)
        std::snprintf(buf, sizeof buf, "%lldm %02llds", static_cast<long long>(ms / 60'000),
                      static_cast<long long>(ms / 1000 % 60));
    else if (ms < 86'400'000)
        std::snprintf(buf, sizeof buf, "%lldh %02lldm", static_cast<long long>(ms / 3'600'000),
                      static_cast<long long>(ms / 60'000 % 60));
    else
        std::snprintf(buf, sizeof buf, "%lldd %02lldh", static_cast<long long>(ms / 86'400'000),
                      static_cast<long long>(ms / 3'600'000 % 24));
    return buf;
}

void AdviceCollector::addCall(const CallStore& store, std::uint32_t i) {
    addCall(store, store.callId(i), store.call(i), store.events(i));
}

void AdviceCollector::addCall(const CallStore& store, std::string_view callId, const CallState& c,
                              std::span<const CallEvent> events) {
    EpochMillis firstAttempt = kNoTime, recordDone = kNoTime, receiptDone = kNoTime;
    EpochMillis awaiting = kNoTime, confirmed = kNoTime;
    std::vector<EpochMillis> laterAttempts;
    for (const CallEvent& e : events) {
        const EpochMillis at = c.base() + e.dt;
        switch (e.type) {
        case EventType::Attempt: {
            const auto outcome = static_cast<AttemptOutcome>(e.code);
            if ((outcome == AttemptOutcome::Executed || outcome == AttemptOutcome::Reoccupied) &&
                e.aux != kNoDt && e.aux >= e.dt)
                m_processing.push_back(std::int64_t(e.aux) - e.dt);
            if (firstAttempt == kNoTime || at < firstAttempt) {
                if (firstAttempt != kNoTime)
                    laterAttempts.push_back(firstAttempt);
                firstAttempt = at;
            } else {
                laterAttempts.push_back(at);
            }
            break;
        }
        case EventType::Record:
            if (isTerminal(static_cast<RecordStatus>(e.code)) &&
                (recordDone == kNoTime || at < recordDone))
                recordDone = at;
            break;
        case EventType::Receipt:
            if (isTerminal(static_cast<RecordStatus>(e.code)) &&
                (receiptDone == kNoTime || at < receiptDone))
                receiptDone = at;
            break;
        case EventType::Caller: {
            const auto s = static_cast<CallerState>(e.code);
            if (s == CallerState::AwaitingResponse && awaiting == kNoTime)
                awaiting = at;
            if ((s == CallerState::ConfirmedSuccess || s == CallerState::ConfirmedFailed) &&
                confirmed == kNoTime)
                confirmed = at;
            break;
        }
        }
    }
    for (const EpochMillis t : laterAttempts)
        m_retry.push_back(t - firstAttempt);
    // A receipt stamped before its record finished is a clock apart: no sample.
    if (recordDone != kNoTime && receiptDone != kNoTime && receiptDone >= recordDone)
        m_receipt.push_back(receiptDone - recordDone);
    if (awaiting != kNoTime && confirmed != kNoTime && confirmed >= awaiting)
        m_confirmation.push_back(confirmed - awaiting);
    const EpochMillis created = store.timeOf(c, c.created);
    const EpochMillis expires = store.expireAt(c);
    if (c.hasRecord() && created != kNoTime && expires != kNoTime && expires > created) {
        const std::int64_t window = expires - created;
        m_window.push_back(window);
        // Retried after, or within the last 10% of, the record's window.
        const EpochMillis risky = expires - window / 10;
        if (std::any_of(laterAttempts.begin(), laterAttempts.end(),
                        [&](EpochMillis t) { return t >= risky; }))
            m_atRisk.emplace_back(callId);
    }
}

Advice AdviceCollector::finish(const std::vector<Anomaly>& anomalies, double safety,
                               EpochMillis from, EpochMillis to) {
    Advice a;
    a.from = from;
    a.to = to;
    a.safety = safety;
    a.processing = distributionOf(m_processing);
    a.retryDelay = distributionOf(m_retry);
    a.receiptDelay = distributionOf(m_receipt);
    a.confirmationDelay = distributionOf(m_confirmation);
    a.observedWindow = distributionOf(m_window);
    const std::string s = safetyText(safety);
    if (a.retryDelay.count > 0 || a.confirmationDelay.count > 0) {
        const std::int64_t tail = std::max(a.retryDelay.p999, a.confirmationDelay.p999);
        a.recommendedWindowMs = roundUpToSecond(safety * double(tail));
        a.windowArithmetic =
            "window >= " + s + " x max(p99.9 retry delay " + adviceDuration(a.retryDelay.p999) +
            ", p99.9 confirmation delay " + adviceDuration(a.confirmationDelay.p999) +
            ") = " + adviceDuration(*a.recommendedWindowMs) + " (rounded up to a second)";
        a.windowsShorterThanRecommended = static_cast<std::int64_t>(
            std::count_if(m_window.begin(), m_window.end(),
                          [&](std::int64_t w) { return w < *a.recommendedWindowMs; }));
    }
    if (a.processing.count > 0) {
        a.recommendedStaleTimeoutMs = roundUpToSecond(3.0 * double(a.processing.p999));
        a.staleArithmetic = "stale PROCESSING timeout >= 3 x p99.9 processing " +
                            adviceDuration(a.processing.p999) + " = " +
                            adviceDuration(*a.recommendedStaleTimeoutMs);
    }
    if (a.receiptDelay.count > 0) {
        a.recommendedReceiptBudgetMs = roundUpToSecond(safety * double(a.receiptDelay.p999));
        a.receiptArithmetic = "receipt redelivery budget >= " + s + " x p99.9 receipt delay " +
                              adviceDuration(a.receiptDelay.p999) + " = " +
                              adviceDuration(*a.recommendedReceiptBudgetMs);
    }
    std::set<std::string> risk(m_atRisk.begin(), m_atRisk.end()), replayed;
    for (const Anomaly& an : anomalies)
        if (an.kind == AnomalyKind::ExpiredReplay)
            replayed.insert(an.callIds.begin(), an.callIds.end());
    risk.insert(replayed.begin(), replayed.end());
    a.expiredReplays = static_cast<std::int64_t>(replayed.size());
    a.atRisk.assign(risk.begin(), risk.end());
    return a;
}

namespace {

void writeDistribution(JsonWriter& w, std::string_view name, const Distribution& d) {
    w.key(name).object().field("count", d.count);
    if (d.count > 0)
        w.field("minMs", d.min)
            .field("p50Ms", d.p50)
            .field("p90Ms", d.p90)
            .field("p99Ms", d.p99)
            .field("p999Ms", d.p999)
            .field("maxMs", d.max);
    w.end();
}

void writeOptional(JsonWriter& w, std::string_view name, const std::optional<std::int64_t>& v) {
    if (v)
        w.field(name, *v);
    else
        w.key(name).null();
}

std::string row(const char* name, const Distribution& d) {
    char buf[256];
    if (d.count == 0) {
        std::snprintf(buf, sizeof buf, "  %-20s %9s  (no samples)\n", name, "0");
        return buf;
    }
    std::snprintf(buf, sizeof buf, "  %-20s %9lld %10s %10s %10s %10s %10s\n", name,
                  static_cast<long long>(d.count), adviceDuration(d.p50).c_str(),
                  adviceDuration(d.p90).c_str(), adviceDuration(d.p99).c_str(),
                  adviceDuration(d.p999).c_str(), adviceDuration(d.max).c_str());
    return buf;
}

} // namespace

std::string adviceJson(const Advice& a) {
    JsonWriter w;
    w.object().field("type", "advice");
    w.key("from").time(a.from);
    w.key("to").time(a.to);
    w.key("safety").real(a.safety);
    writeDistribution(w, "processing", a.processing);
    writeDistribution(w, "retryDelay", a.retryDelay);
    writeDistribution(w, "receiptDelay", a.receiptDelay);
    writeDistribution(w, "confirmationDelay", a.confirmationDelay);
    writeDistribution(w, "observedWindow", a.observedWindow);
    writeOptional(w, "recommendedWindowMs", a.recommendedWindowMs);
    writeOptional(w, "recommendedStaleTimeoutMs", a.recommendedStaleTimeoutMs);
    writeOptional(w, "recommendedReceiptBudgetMs", a.recommendedReceiptBudgetMs);
    w.field("windowsShorterThanRecommended", a.windowsShorterThanRecommended);
    w.field("expiredReplays", a.expiredReplays);
    w.key("atRisk").strings(a.atRisk);
    return w.end().take();
}

std::string adviceText(const Advice& a) {
    std::string out =
        "measured " + formatIsoMillis(a.from) + " .. " + formatIsoMillis(a.to) + "\n\n";
    char head[160];
    std::snprintf(head, sizeof head, "  %-20s %9s %10s %10s %10s %10s %10s\n", "", "count", "p50",
                  "p90", "p99", "p99.9", "max");
    out += head;
    out += row("processing", a.processing);
    out += row("retry delay", a.retryDelay);
    out += row("receipt delay", a.receiptDelay);
    out += row("confirmation delay", a.confirmationDelay);
    out += row("configured window", a.observedWindow);
    out += "\nrecommended\n";
    const auto line = [&](const std::string& arithmetic, const char* missing) {
        out += "  " + (arithmetic.empty() ? std::string(missing) : arithmetic) + "\n";
    };
    line(a.windowArithmetic, "window: no retries or confirmations measured");
    line(a.staleArithmetic, "stale PROCESSING timeout: no executions measured");
    line(a.receiptArithmetic, "receipt redelivery budget: no terminal receipts measured");
    if (a.recommendedWindowMs && a.observedWindow.count > 0) {
        if (a.windowsShorterThanRecommended > 0)
            out += "  " + std::to_string(a.windowsShorterThanRecommended) + " of " +
                   std::to_string(a.observedWindow.count) +
                   " records had a shorter window (shortest " +
                   adviceDuration(a.observedWindow.min) + "): lengthen it\n";
        else
            out += "  every record's window read (shortest " +
                   adviceDuration(a.observedWindow.min) + ") is at least that\n";
    }
    if (a.expiredReplays > 0)
        out += "  " + std::to_string(a.expiredReplays) +
               " callIds were executed again after their record expired (expired_replay): "
               "their windows were shorter than their retries, and those records are gone\n";
    out += "\nat risk of expired_replay (retried after or within 10% of the record's expiry, or "
           "executed again after it): " +
           std::to_string(a.atRisk.size()) + "\n";
    return out;
}

} // namespace callscope
