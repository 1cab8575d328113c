// The visible form of hostile text (SPEC §8): what a terminal or a renderer
// would act on is shown as an escape, everything else is left as it is.
#include "models/anomaly_json.h"
#include "models/visible_text.h"

#include <gtest/gtest.h>

using namespace callscope;

TEST(VisibleText, PlainAndNonLatinTextIsUnchanged) {
    for (const char* s : {"", "call-42", "a\\b \"q\" <b>&amp;", "заказ-7 订单 ✓ 🙂"}) {
        EXPECT_FALSE(needsVisibleEscape(s)) << s;
        EXPECT_EQ(visibleText(s), s);
    }
}

TEST(VisibleText, TerminalEscapesAndControlsAreShownNotSent) {
    EXPECT_EQ(visibleText("x\x1b[2J\x1b]0;owned\x07y"), "x\\x1b[2J\\x1b]0;owned\\x07y");
    EXPECT_EQ(visibleText(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(visibleText("l1\nl2\r\tz\x7f"), "l1\\x0al2\\x0d\\x09z\\x7f");
    EXPECT_EQ(visibleText("\xc2\x9b"
                          "31m"),
              "\\x9b31m"); // C1 CSI
}

TEST(VisibleText, BidiControlsAreShown) {
    EXPECT_EQ(visibleText("abc\u202Egpj.exe"), "abc\\u202egpj.exe");
    EXPECT_EQ(visibleText("\u2066x\u2069\u200f\u061c\u2028"),
              "\\u2066x\\u2069\\u200f\\u061c\\u2028");
}

TEST(VisibleText, InvisibleCharactersThatMakeTwoIdsLookAlikeAreShown) {
    EXPECT_EQ(visibleText("a\u200bb\u00adc\ufeff"), "a\\u200bb\\xadc\\ufeff");
    EXPECT_EQ(visibleText("t\U000E0041"), "t\\U000e0041");
    EXPECT_EQ(jsonQuote("t\U000E0041\u200d"), "\"t\\udb40\\udc41\\u200d\"");
}

TEST(VisibleText, InvalidUtf8IsShownBytewise) {
    EXPECT_EQ(visibleText("a\xff"
                          "b\xc3"),
              "a\\xffb\\xc3");
    EXPECT_EQ(visibleText("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
    EXPECT_EQ(visibleText("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
    EXPECT_EQ(visibleText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // past U+10FFFF
    EXPECT_EQ(visibleText("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");          // 3-byte overlong
    EXPECT_EQ(visibleText("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf"); // 4-byte overlong
    EXPECT_EQ(visibleText("a\xe2\x82"
                          "b"),
              "a\\xe2\\x82b");                                      // cut short mid-string
    EXPECT_EQ(visibleText("\x80x"), "\\x80x");                      // a lone continuation
    EXPECT_EQ(visibleText("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf"); // U+10FFFF is valid
    EXPECT_FALSE(isValidUtf8("a\xff"));
    EXPECT_TRUE(isValidUtf8("заказ"));
}

TEST(VisibleText, LongTextStaysWhole) {
    const std::string big(64 * 1024, 'x');
    EXPECT_EQ(visibleText(big), big);
    const std::string bad = big + "\x1b";
    EXPECT_EQ(visibleText(bad).size(), big.size() + 4);
}

TEST(VisibleText, JsonIsValidUtf8WithEveryControlEscaped) {
    EXPECT_EQ(jsonQuote("a\xff\x1b\x7f\"\\"), "\"a\xef\xbf\xbd\\u001b\\u007f\\\"\\\\\"");
    EXPECT_EQ(jsonQuote("заказ\n"), "\"заказ\\n\"");
    // Losslessly: a parser reads the same string back.
    EXPECT_EQ(jsonQuote("a\u202Eb\xc2\x9b\u2028"), "\"a\\u202eb\\u009b\\u2028\"");
}
