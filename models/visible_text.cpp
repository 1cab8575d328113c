#include "models/visible_text.h"

#include <cstdint>
#include <cstdio>

namespace callscope {
namespace {

// The length of the valid UTF-8 sequence starting at s[i] (1..4) and its code
// point, or 0 when the bytes there are not one (overlong forms, surrogates and
// code points past U+10FFFF are invalid, as in RFC 3629).
int decode(std::string_view s, std::size_t i, char32_t& cp) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    if (c < 0x80) {
        cp = c;
        return 1;
    }
    int n = 0;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    for (int k = 1; k < n; ++k) {
        if ((b(k) & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (b(k) & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

bool mustEscape(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x00ad || cp == 0x061c ||
           (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
           (cp >= 0xe0000 && cp <= 0xe007f);
}

} // namespace

int utf8At(std::string_view text, std::size_t i, char32_t& codePoint) {
    return decode(text, i, codePoint);
}

bool isControlOrBidi(char32_t codePoint) {
    return mustEscape(codePoint);
}

bool needsVisibleEscape(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) { // the common case: printable ASCII
            ++i;
            continue;
        }
        char32_t cp = 0;
        const int n = decode(text, i, cp);
        if (n == 0 || mustEscape(cp))
            return true;
        i += n;
    }
    return false;
}

std::string visibleText(std::string_view text) {
    if (!needsVisibleEscape(text))
        return std::string(text);
    std::string out;
    out.reserve(text.size() + 16);
    char buf[12];
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const int n = decode(text, i, cp);
        if (n == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
            out += buf;
            ++i;
            continue;
        }
        if (!mustEscape(cp)) {
            out.append(text.substr(i, n));
        } else {
            std::snprintf(buf, sizeof buf,
                          cp < 0x100     ? "\\x%02x"
                          : cp < 0x10000 ? "\\u%04x"
                                         : "\\U%08x",
                          static_cast<unsigned>(cp));
            out += buf;
        }
        i += n;
    }
    return out;
}

bool isValidUtf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        char32_t cp = 0;
        const int n = decode(text, i, cp);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

std::string validUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const int n = decode(text, i, cp);
        if (n == 0) {
            out += "\xef\xbf\xbd";
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

} // namespace callscope
