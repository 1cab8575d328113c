#pragma once
// The one JSON writer behind every JSON output (scan, watch, inspect,
// reports, the simulator's truth and summary): values are appended in order,
// commas and nesting are the writer's business, strings are escaped once
// (jsonQuote), and nothing edits finished text. Compact, no spaces: the
// formats the README documents, byte for byte.
#include "models/timestamp.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// A JSON string literal (quotes included): valid UTF-8 (bad bytes become
// U+FFFD), controls, bidi overrides and invisible characters as \u escapes.
std::string jsonQuote(std::string_view text);

class JsonWriter {
public:
    JsonWriter& object(); // {
    JsonWriter& array();  // [
    JsonWriter& end();    // closes the innermost object or array
    JsonWriter& key(std::string_view name);

    JsonWriter& string(std::string_view text);
    JsonWriter& number(std::int64_t n);
    JsonWriter& real(double x); // shortest form that reads back the same; null if not finite
    JsonWriter& boolean(bool b);
    JsonWriter& null();
    // An ISO-8601 UTC time with milliseconds, or null for kNoTime.
    JsonWriter& time(std::int64_t epochMillis);
    JsonWriter& strings(const std::vector<std::string>& texts); // an array of strings

    // key + value, the common case.
    JsonWriter& field(std::string_view name, std::string_view text) {
        return key(name).string(text);
    }
    JsonWriter& field(std::string_view name, const char* text) { return key(name).string(text); }
    JsonWriter& field(std::string_view name, const std::string& text) {
        return key(name).string(text);
    }
    JsonWriter& field(std::string_view name, std::int64_t n) { return key(name).number(n); }
    JsonWriter& field(std::string_view name, int n) { return key(name).number(n); }
    JsonWriter& field(std::string_view name, std::size_t n) {
        return key(name).number(static_cast<std::int64_t>(n));
    }
    JsonWriter& field(std::string_view name, bool b) { return key(name).boolean(b); }

    const std::string& text() const { return m_out; }
    std::string take() { return std::move(m_out); }

private:
    void beforeValue();
    struct Level {
        char close;    // '}' or ']'
        bool hasItems; // a comma goes before the next item
    };
    std::string m_out;
    std::vector<Level> m_levels; // the open objects and arrays, innermost last
    bool m_afterKey = false;
};

} // namespace callscope
