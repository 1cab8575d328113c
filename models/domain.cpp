#include "models/domain.h"

namespace callscope {
namespace {
template <typename Enum, std::size_t N>
std::optional<Enum> fromName(std::string_view name, const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == name)
            return static_cast<Enum>(i);
    return std::nullopt;
}
} // namespace

std::string_view toString(RecordStatus v) {
    return nameOf(v, kRecordStatusNames);
}
std::string_view toString(AttemptOutcome v) {
    return nameOf(v, kAttemptOutcomeNames);
}
std::string_view toString(CallerState v) {
    return nameOf(v, kCallerStateNames);
}
std::string_view toString(AnomalyKind v) {
    return nameOf(v, kAnomalyKindNames);
}
std::string_view toString(Severity v) {
    return nameOf(v, kSeverityNames);
}

std::string_view toString(Cause v) {
    return nameOf(v, kCauseNames);
}

std::optional<RecordStatus> recordStatusFromName(std::string_view n) {
    return fromName<RecordStatus>(n, kRecordStatusNames);
}
std::optional<AnomalyKind> anomalyKindFromName(std::string_view n) {
    return fromName<AnomalyKind>(n, kAnomalyKindNames);
}

} // namespace callscope
