// PostgreSQL's binary COPY rows as a window's read takes them (issue 12):
// the fields come out as the text format gives them, times as the epoch
// milliseconds timeField() makes of their text.
#include "connectors/copy_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

using namespace callscope;

namespace {

void putInt(std::string& out, std::int64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i)
        out += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
}

std::string header() {
    std::string h("PGCOPY\n\377\r\n\0", 11);
    putInt(h, 0, 4); // flags
    putInt(h, 0, 4); // no extension
    return h;
}

// A field: its bytes (nullopt: NULL).
struct Field {
    std::optional<std::string> bytes;
};
Field text(const std::string& s) {
    return {s};
}
Field integer(std::int64_t v, int bytes) {
    std::string s;
    putInt(s, v, bytes);
    return {s};
}
Field null() {
    return {std::nullopt};
}

std::string row(std::initializer_list<Field> fields) {
    std::string r;
    putInt(r, static_cast<std::int64_t>(fields.size()), 2);
    for (const Field& f : fields) {
        putInt(r, f.bytes ? static_cast<std::int64_t>(f.bytes->size()) : -1, 4);
        if (f.bytes)
            r += *f.bytes;
    }
    return r;
}

constexpr std::int64_t k2000 = 946'684'800'000; // 2000-01-01 in epoch ms

} // namespace

TEST(CopyBinary, ARowComesOutAsItsTextWouldWithTimesInEpochMillis) {
    using K = CopyBinary;
    const std::vector<K> kinds{K::Int,       K::Text,      K::Int, K::Int,
                               K::Timestamp, K::Timestamp, K::Text};
    std::vector<std::string> fields{"stale"};
    std::vector<bool> nulls;
    // 2024-05-20 10:29:03.120456 UTC: 1716200943120 ms and 456 us.
    const std::int64_t at = (1'716'200'943'120 - k2000) * 1000 + 456;
    const std::string first = header() + row({integer(42, 8), text("cid-1\t\\N"), integer(-5, 4),
                                              integer(-1, 2), integer(at, 8), null(), text("")});
    ASSERT_EQ(splitBinaryCopyRow(first, true, kinds, fields, nulls), 1);
    EXPECT_EQ(fields,
              (std::vector<std::string>{"42", "cid-1\t\\N", "-5", "-1", "1716200943120", "", ""}));
    EXPECT_EQ(nulls, (std::vector<bool>{false, false, false, false, false, true, false}));
    // The next message is a row without the header; then the trailer.
    const std::string next = row({integer(7, 8), text("x"), integer(0, 4), integer(1, 2),
                                  integer(at + 44, 8), integer(at + 544, 8), text("y")});
    ASSERT_EQ(splitBinaryCopyRow(next, false, kinds, fields, nulls), 1);
    EXPECT_EQ(fields[4], "1716200943121"); // .120500: half away from zero
    EXPECT_EQ(fields[5], "1716200943121"); // .121000 exactly
    std::string trailer;
    putInt(trailer, -1, 2);
    EXPECT_EQ(splitBinaryCopyRow(trailer, false, kinds, fields, nulls), 0);
    EXPECT_EQ(splitBinaryCopyRow(header() + trailer, true, kinds, fields, nulls), 0); // no rows
}

TEST(CopyBinary, TimesRoundAndClampAsTheirTextDoes) {
    const std::vector<CopyBinary> kinds{CopyBinary::Timestamp};
    std::vector<std::string> fields;
    std::vector<bool> nulls;
    const auto millis = [&](std::int64_t micros2000) {
        EXPECT_EQ(splitBinaryCopyRow(row({integer(micros2000, 8)}), false, kinds, fields, nulls),
                  1);
        return std::stoll(fields[0]);
    };
    constexpr std::int64_t clamp = 9'000'000'000'000'000;
    // 1969-12-31 23:59:59.9985: -1.5 ms from the epoch, half away from zero.
    EXPECT_EQ(millis(-k2000 * 1000 - 1500), -2);
    EXPECT_EQ(millis(-k2000 * 1000 - 1499), -1);
    EXPECT_EQ(millis(0), k2000);
    EXPECT_EQ(millis(INT64_MAX), clamp);  // infinity
    EXPECT_EQ(millis(INT64_MIN), -clamp); // -infinity
    // Years near 294,000 (valid timestamps) and past: no overflow on the way.
    EXPECT_EQ(millis(INT64_MAX - k2000 * 1000 - 300), clamp);
    EXPECT_EQ(millis(INT64_MAX - k2000 * 1000 - 2000), clamp);
    EXPECT_EQ(millis(INT64_MIN + k2000 * 1000 + 300), -clamp);
    // 9999-12-31 23:59:59.999 is a time; year 10000 and 1 BC are out of range.
    EXPECT_EQ(millis((253'402'300'799'999 - k2000) * 1000), 253'402'300'799'999);
    EXPECT_EQ(millis((253'402'300'800'000 - k2000) * 1000), clamp);
    EXPECT_EQ(millis((-62'135'596'800'000 - k2000) * 1000), -62'135'596'800'000); // 0001-01-01
    EXPECT_EQ(millis((-62'135'596'800'001 - k2000) * 1000), -clamp);
}

TEST(CopyBinary, AMessageThatIsNotARowOfTheColumnsIsRefused) {
    const std::vector<CopyBinary> kinds{CopyBinary::Int, CopyBinary::Text};
    std::vector<std::string> fields;
    std::vector<bool> nulls;
    const std::string good = row({integer(1, 8), text("a")});
    ASSERT_EQ(splitBinaryCopyRow(good, false, kinds, fields, nulls), 1);
    const auto refused = [&](const std::string& m, bool first = false) {
        return splitBinaryCopyRow(m, first, kinds, fields, nulls) == -1;
    };
    EXPECT_TRUE(refused(good, true));                      // no header
    EXPECT_TRUE(refused("PGCOPY\n\377\r\n" + good, true)); // a bad signature
    std::string oids = header();
    oids[11 + 1] = 1; // flag bit 16: rows carry OIDs
    EXPECT_TRUE(refused(oids + good, true));
    EXPECT_TRUE(refused(row({integer(1, 8)})));            // a field short
    EXPECT_TRUE(refused(row({integer(1, 3), text("a")}))); // no such integer
    EXPECT_TRUE(refused(good + "x"));                      // bytes after the row
    EXPECT_TRUE(refused(good.substr(0, good.size() - 1))); // cut short
    EXPECT_TRUE(refused(std::string("\x00", 1)));          // not even a count
    std::string huge = row({integer(1, 8), text("a")});
    huge[2 + 4 + 8 + 0] = '\x7f'; // the text's length: far past the end
    EXPECT_TRUE(refused(huge));
    std::string trailerAndMore;
    putInt(trailerAndMore, -1, 2);
    EXPECT_TRUE(refused(trailerAndMore + "z"));
}
