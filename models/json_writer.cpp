#include "models/json_writer.h"

#include <charconv>
#include <cmath>

#include "models/visible_text.h"

#include <cstdio>

namespace callscope {

std::string jsonQuote(std::string_view raw) {
    // JSON is Unicode: bytes that are not UTF-8 (a SQL_ASCII database, a
    // message key) become U+FFFD rather than an unparseable line.
    std::string fixed;
    std::string_view text = raw;
    if (!isValidUtf8(raw)) {
        fixed = validUtf8(raw);
        text = fixed;
    }
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    char buf[16];
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) >= 0x80) {
            // Controls and bidi overrides as \u escapes: the same string for a
            // parser, nothing a terminal or a viewer acts on.
            char32_t cp = 0;
            const int n = utf8At(text, i, cp);
            if (isControlOrBidi(cp)) {
                if (cp < 0x10000) {
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
                    out += buf;
                } else { // a surrogate pair, as JSON writes what lies past U+FFFF
                    const auto v = static_cast<unsigned>(cp) - 0x10000;
                    std::snprintf(buf, sizeof buf, "\\u%04x", 0xd800 + (v >> 10));
                    out += buf;
                    std::snprintf(buf, sizeof buf, "\\u%04x", 0xdc00 + (v & 0x3ff));
                    out += buf;
                }
            } else {
                out.append(text.substr(i, n));
            }
            i += n;
            continue;
        }
        ++i;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
    return out;
}

void JsonWriter::beforeValue() {
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (!m_levels.empty()) {
        if (m_levels.back().hasItems)
            m_out += ',';
        m_levels.back().hasItems = true;
    }
}

JsonWriter& JsonWriter::object() {
    beforeValue();
    m_out += '{';
    m_levels.push_back({'}', false});
    return *this;
}

JsonWriter& JsonWriter::array() {
    beforeValue();
    m_out += '[';
    m_levels.push_back({']', false});
    return *this;
}

JsonWriter& JsonWriter::end() {
    m_out += m_levels.back().close;
    m_levels.pop_back();
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    beforeValue();
    m_out += jsonQuote(name);
    m_out += ':';
    m_afterKey = true;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
    beforeValue();
    m_out += jsonQuote(text);
    return *this;
}

JsonWriter& JsonWriter::number(std::int64_t n) {
    beforeValue();
    m_out += std::to_string(n);
    return *this;
}

JsonWriter& JsonWriter::real(double x) {
    if (!std::isfinite(x))
        return null();
    beforeValue();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    m_out.append(buf, r.ptr);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
    beforeValue();
    m_out += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    beforeValue();
    m_out += "null";
    return *this;
}

JsonWriter& JsonWriter::time(std::int64_t t) {
    return t == INT64_MIN ? null() : string(formatIsoMillis(t));
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& texts) {
    array();
    for (const std::string& t : texts)
        string(t);
    return end();
}

} // namespace callscope
