#pragma once
// The window advisor (issue 14): the tails callscope measures — processing,
// retry delay, receipt delay, confirmation delay — and the windows the
// deployment configured, turned into recommendations with their arithmetic.
// The protocol's rule: the idempotency window and the receipt budget come
// from the slowest processing and the longest delay before a human looks,
// never from feel.
#include "models/anomaly.h"
#include "models/call_store.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// One measured duration's distribution (milliseconds), and its histogram on a
// log axis: kHistogramBuckets from 1 ms, kBucketsPerDecade a decade.
inline constexpr int kBucketsPerDecade = 5;
inline constexpr std::size_t kHistogramBuckets = 8 * kBucketsPerDecade; // 1 ms .. 10^8 ms (~28 h)

struct Distribution {
    std::int64_t count = 0;
    std::int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, min = 0;
    std::array<std::int64_t, kHistogramBuckets> histogram{}; // the last bucket holds the rest
};
// The lower edge (ms) of a histogram bucket; bucketOf(ms) is where ms falls.
double bucketFloorMs(std::size_t bucket);
std::size_t bucketOf(std::int64_t ms);

struct Advice {
    EpochMillis from = kNoTime, to = kNoTime; // the window read
    double safety = 2.0;
    Distribution processing;        // EXECUTED / REOCCUPIED attempt: arrived -> finished
    Distribution retryDelay;        // a callId's first attempt -> each later attempt
    Distribution receiptDelay;      // record terminal -> first terminal receipt
    Distribution confirmationDelay; // caller AWAITING_RESPONSE -> CONFIRMED_*
    Distribution observedWindow;    // expire_at - created_at of the records
    std::optional<std::int64_t> recommendedWindowMs;
    std::optional<std::int64_t> recommendedStaleTimeoutMs;
    std::optional<std::int64_t> recommendedReceiptBudgetMs;
    // The arithmetic behind each recommendation, for people.
    std::string windowArithmetic, staleArithmetic, receiptArithmetic;
    std::int64_t windowsShorterThanRecommended = 0; // records whose window is below it
    // callIds retried after, or within 10% of, their record's expiry, and those
    // whose record expired and was executed again (expired_replay).
    std::vector<std::string> atRisk;
    std::int64_t expiredReplays = 0; // of them, executed again after expiry (expired_replay)
};

// Collects the samples call by call: before the calls leave memory while a
// window loads, and once more over what is left at the end.
class AdviceCollector {
public:
    void addCall(const CallStore& store, std::uint32_t call);
    // A call packed (live: final and healthy, CallStore::forEachFrozen).
    void addCall(const CallStore& store, std::string_view callId, const CallState& c,
                 std::span<const CallEvent> events);
    // The anomalies (expired_replay's callIds are at risk) and the result.
    Advice finish(const std::vector<Anomaly>& anomalies, double safety, EpochMillis from,
                  EpochMillis to);

private:
    std::vector<std::int64_t> m_processing, m_retry, m_receipt, m_confirmation, m_window;
    std::vector<std::string> m_atRisk;
};

// "1.2 s", "340 ms", "2h 05m": a duration in the advice's words.
std::string adviceDuration(std::int64_t ms);

// The JSON object of the README ({"type":"advice", ...}) and the text report.
std::string adviceJson(const Advice& a);
std::string adviceText(const Advice& a);

} // namespace callscope
