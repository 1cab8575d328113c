#pragma once
// Durations as the config file writes them: "500ms", "30s", "5m", "2h", "7d".
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace callscope {

using Millis = std::chrono::milliseconds;

// Parses a positive whole number followed by one unit (ms, s, m, h, d).
// Returns nullopt on anything else, including overflow and zero.
std::optional<Millis> parseDuration(std::string_view text);

// The shortest exact spelling of a duration in the same units ("90s", "2h").
std::string formatDuration(Millis d);

} // namespace callscope
