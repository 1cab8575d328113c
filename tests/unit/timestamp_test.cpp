#include "models/timestamp.h"

#include <gtest/gtest.h>

using namespace callscope;

TEST(Timestamp, ParsesIsoWithZuluAndOffsets) {
    const EpochMillis t = 1716200943120; // 2024-05-20T10:29:03.120Z
    EXPECT_EQ(parseTimestamp("2024-05-20T10:29:03.120Z"), t);
    EXPECT_EQ(parseTimestamp("2024-05-20T12:29:03.120+02:00"), t);
    EXPECT_EQ(parseTimestamp("2024-05-20T05:29:03.120-0500"), t);
    EXPECT_EQ(parseTimestamp("2024-05-20 10:29:03.12Z"), t);
    EXPECT_EQ(parseTimestamp("2024-05-20T10:29:03.120456Z"), t);
    EXPECT_EQ(parseTimestamp("2024-05-20T10:29:03Z"), t - 120);
}

TEST(Timestamp, ParsesEpochMilliseconds) {
    EXPECT_EQ(parseTimestamp("1716200943120"), 1716200943120);
}

TEST(Timestamp, RefusesAmbiguousOrBrokenText) {
    for (const char* bad : {"", "2024-05-20", "2024-05-20T10:29:03", "2024-13-20T10:29:03Z",
                            "2024-02-30T10:29:03Z", "2024-05-20T25:29:03Z", "yesterday",
                            "2024-05-20T10:29:03.Z", "2024-05-20T10:29:03Zjunk", "-1"})
        EXPECT_FALSE(parseTimestamp(bad).has_value()) << bad;
}

TEST(Timestamp, FormatsRoundTrip) {
    EXPECT_EQ(formatIsoMillis(1716200943120), "2024-05-20T10:29:03.120Z");
    EXPECT_EQ(formatIsoMillis(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(parseTimestamp(formatIsoMillis(1234567890123)), 1234567890123);
}
