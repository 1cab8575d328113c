#pragma once
// The words of the protocol (SPEC §1–§3) as enums, with their canonical names.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace callscope {

enum class RecordStatus : std::uint8_t { Processing, Success, Failed };
inline constexpr std::array<std::string_view, 3> kRecordStatusNames{"PROCESSING", "SUCCESS",
                                                                    "FAILED"};

enum class AttemptOutcome : std::uint8_t {
    Executed,
    InProgress,
    Replayed,
    DigestConflict,
    Reoccupied
};
inline constexpr std::array<std::string_view, 5> kAttemptOutcomeNames{
    "EXECUTED", "IN_PROGRESS", "REPLAYED", "DIGEST_CONFLICT", "REOCCUPIED"};

enum class CallerState : std::uint8_t {
    Initiated,
    AwaitingResponse,
    TimeoutUnknown,
    AwaitingReceipt,
    ConfirmedSuccess,
    ConfirmedFailed,
    Escalated
};
inline constexpr std::array<std::string_view, 7> kCallerStateNames{
    "INITIATED",         "AWAITING_RESPONSE", "TIMEOUT_UNKNOWN", "AWAITING_RECEIPT",
    "CONFIRMED_SUCCESS", "CONFIRMED_FAILED",  "ESCALATED"};

enum class AnomalyKind : std::uint8_t {
    StuckProcessing,
    DigestConflict,
    DuplicateCaller,
    KeyRotation,
    ConcurrentExecution,
    ExpiredReplay,
    ReceiptMissing,
    StateMismatch,
    ReceiptRegression,
    CallerStuck,
    OrphanReceipt,
    CallIdRewritten,
    EffectMissing
};
inline constexpr std::array<std::string_view, 13> kAnomalyKindNames{
    "stuck_processing",     "digest_conflict", "duplicate_caller", "key_rotation",
    "concurrent_execution", "expired_replay",  "receipt_missing",  "state_mismatch",
    "receipt_regression",   "caller_stuck",    "orphan_receipt",   "callid_rewritten",
    "effect_missing"};

inline constexpr std::size_t kAnomalyKindCount = kAnomalyKindNames.size();

// The diagnosis's stable cause (SPEC §3 "Diagnosis").
enum class Cause : std::uint8_t {
    ExecutedOnce,
    KeyRotatedAfterTimeout, // the first callId timed out, the request came again under a new one
    CallIdRegenerated,      // a new callId for the same request with no timeout before it
    CallIdRewrittenInTransit,
    DigestMismatch,
    WindowExpired,
    ConcurrentExecution,
    EffectMissing,
    ReceiptLost,
    Unknown
};
inline constexpr std::array<std::string_view, 10> kCauseNames{
    "executed_once",        "key_rotated_after_timeout",
    "callid_regenerated",   "callid_rewritten_in_transit",
    "digest_mismatch",      "window_expired",
    "concurrent_execution", "effect_missing",
    "receipt_lost",         "unknown"};

enum class Severity : std::uint8_t { Info, Warning, Critical };
inline constexpr std::array<std::string_view, 3> kSeverityNames{"info", "warning", "critical"};

template <typename Enum, std::size_t N>
constexpr std::string_view nameOf(Enum value, const std::array<std::string_view, N>& names) {
    return names[static_cast<std::size_t>(value)];
}

std::string_view toString(RecordStatus v);
std::string_view toString(AttemptOutcome v);
std::string_view toString(CallerState v);
std::string_view toString(AnomalyKind v);
std::string_view toString(Severity v);
std::string_view toString(Cause v);

std::optional<RecordStatus> recordStatusFromName(std::string_view name);
std::optional<AnomalyKind> anomalyKindFromName(std::string_view name);

constexpr bool isTerminal(RecordStatus s) {
    return s != RecordStatus::Processing;
}
constexpr bool isTerminal(CallerState s) {
    return s == CallerState::ConfirmedSuccess || s == CallerState::ConfirmedFailed;
}

} // namespace callscope
