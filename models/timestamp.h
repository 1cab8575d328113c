#pragma once
// Event times are integer milliseconds since the Unix epoch, UTC.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace callscope {

using EpochMillis = std::int64_t;

// "2024-05-20T10:29:03.120Z"
std::string formatIsoMillis(EpochMillis t);

// ISO-8601 date-time with "Z" or a ±HH:MM / ±HHMM offset (fraction optional,
// 'T' or ' ' between date and time), or an integer of epoch milliseconds.
std::optional<EpochMillis> parseTimestamp(std::string_view text);

EpochMillis nowMillis();

} // namespace callscope
