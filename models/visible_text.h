#pragma once
// Text from tables and messages is hostile until escaped for where it goes
// (SPEC §8). visibleText() is the one form every human-facing exit starts
// from — terminal, widgets, HTML, SVG, PDF: what cannot be shown as itself is
// shown as an escape, never emitted. Markup escaping for HTML/SVG comes on top
// (views/palette.h htmlText); JSON has its own quoting (anomaly_json.h).
#include <string>
#include <string_view>

namespace callscope {

// Escapes, as `\xNN` or `\uNNNN`:
//  - bytes that are not valid UTF-8 (each byte: `\xff`);
//  - C0 controls (ESC, BEL, CR, LF, TAB, NUL …), DEL and C1 controls — a
//    terminal would act on them (clear the screen, retitle the window) and a
//    newline would forge a line of output;
//  - bidirectional controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069)
//    and U+2028/U+2029, which reorder or break what is displayed around them;
//  - invisible format characters (soft hyphen, zero-width spaces and joiners,
//    U+2060–U+206F, BOM, U+FFF9–U+FFFB, tags U+E0000–U+E007F), which make two
//    different callIds look the same.
// Everything else, including the backslash and non-Latin text, is unchanged.
// Returns its input unchanged (no copy beyond the result) when nothing needs it.
std::string visibleText(std::string_view text);

// True when visibleText would change the text.
bool needsVisibleEscape(std::string_view text);

// The valid UTF-8 sequence at text[i]: its length (1..4) and code point, or
// 0 when the bytes there are not one.
int utf8At(std::string_view text, std::size_t i, char32_t& codePoint);

// True for the code points visibleText escapes (controls, bidi, separators).
bool isControlOrBidi(char32_t codePoint);

// True when the text is valid UTF-8.
bool isValidUtf8(std::string_view text);

// Valid UTF-8 of the text: each invalid byte becomes U+FFFD. For outputs that
// must be Unicode (JSON) and keep every valid character as it is.
std::string validUtf8(std::string_view text);

} // namespace callscope
