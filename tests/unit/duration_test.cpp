#include "models/duration.h"

#include <gtest/gtest.h>

using namespace callscope;

TEST(Duration, ParsesEveryUnitOfTheConfigFile) {
    EXPECT_EQ(parseDuration("500ms"), Millis{500});
    EXPECT_EQ(parseDuration("30s"), Millis{30'000});
    EXPECT_EQ(parseDuration("5m"), Millis{300'000});
    EXPECT_EQ(parseDuration("2h"), Millis{7'200'000});
    EXPECT_EQ(parseDuration("7d"), Millis{604'800'000});
}

TEST(Duration, RefusesWhatIsNotADuration) {
    for (const char* bad : {"", "5", "m", "5 m", "-5m", "0s", "1.5s", "5min", "5M", "s5",
                            "99999999999999999999d", "9223372036854775807d"})
        EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
}

TEST(Duration, FormatsInTheLargestExactUnit) {
    EXPECT_EQ(formatDuration(Millis{500}), "500ms");
    EXPECT_EQ(formatDuration(Millis{90'000}), "90s");
    EXPECT_EQ(formatDuration(Millis{7'200'000}), "2h");
    EXPECT_EQ(formatDuration(Millis{1500}), "1500ms");
}
