#pragma once
// PostgreSQL's COPY formats, as COPY ... TO STDOUT writes them: text, and
// binary for the columns a window's read selects.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// Splits one line (with or without its newline) into fields: tab-separated,
// \N for NULL (nulls[i] true, fields[i] empty), backslash escapes (\t \n \r
// \b \f \v, up to three octal digits, any other character as itself).
void splitCopyLine(std::string_view line, std::vector<std::string>& fields,
                   std::vector<bool>& nulls);

// Times read from either format that are out of range (+-infinity, NaN,
// before year 1 or past 9999) come as +-kTimeClamp epoch milliseconds.
inline constexpr std::int64_t kTimeClamp = 9'000'000'000'000'000;
// Epoch microseconds to milliseconds, half away from zero (as PostgreSQL's
// numeric rounds).
inline std::int64_t roundToMillis(std::int64_t micros) {
    return micros >= 0 ? (micros + 500) / 1000 : -((-micros + 500) / 1000);
}

// How a column comes in binary COPY: text (text, varchar, bpchar with its
// padding), a 2-, 4- or 8-byte integer, or a timestamp (with or without time
// zone: microseconds since 2000-01-01).
enum class CopyBinary : std::uint8_t { Text, Int, Timestamp };

// One message of a binary COPY (a row; the first one starts with the
// header) into the fields splitCopyLine gives for the same row in text,
// except that a timestamp comes as integer epoch milliseconds, rounded half
// away from zero as timeField() rounds its text, and +-9e15 for +-infinity
// and for times before year 1 or past 9999 (out of range, as their text is).
// Returns 1 for a row, 0 for none (the trailer, or a header alone), -1 when
// the message is not a row of `kinds`.
int splitBinaryCopyRow(std::string_view message, bool first, const std::vector<CopyBinary>& kinds,
                       std::vector<std::string>& fields, std::vector<bool>& nulls);

} // namespace callscope
