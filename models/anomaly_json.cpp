#include "models/anomaly_json.h"

#include "models/visible_text.h"

#include <algorithm>
#include <cstdio>

namespace callscope {
namespace {

void sortUnique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

void appendArray(std::string& out, const std::vector<std::string>& v) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += ',';
        out += jsonQuote(v[i]);
    }
    out += ']';
}

} // namespace

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
    char buf[8];
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
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
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

std::string toJsonLine(AnomalyLine a) {
    sortUnique(a.callIds);
    sortUnique(a.instances);
    sortUnique(a.digests);
    std::string out = R"({"type":"anomaly","kind":)";
    out += jsonQuote(toString(a.kind));
    out += R"(,"severity":)";
    out += jsonQuote(toString(a.severity));
    out += R"(,"state":)";
    out += jsonQuote(a.state);
    out += R"(,"callIds":)";
    appendArray(out, a.callIds);
    out += R"(,"instances":)";
    appendArray(out, a.instances);
    out += R"(,"digests":)";
    appendArray(out, a.digests);
    out += R"(,"firstEventAt":)";
    out += jsonQuote(formatIsoMillis(a.firstEventAt));
    out += R"(,"detectedAt":)";
    out += jsonQuote(formatIsoMillis(a.detectedAt));
    if (a.resolvedAt != INT64_MIN) {
        out += R"(,"resolvedAt":)";
        out += jsonQuote(formatIsoMillis(a.resolvedAt));
    }
    out += R"(,"summary":)";
    out += jsonQuote(a.summary);
    out += '}';
    return out;
}

} // namespace callscope
