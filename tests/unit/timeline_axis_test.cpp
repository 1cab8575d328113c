#include "models/timeline_axis.h"

#include <gtest/gtest.h>

using namespace callscope;

TEST(TimeAxis, MapsTimeToPixelsAndBack) {
    TimeAxis a{1000, 3000, 200};
    EXPECT_DOUBLE_EQ(a.x(1000), 0);
    EXPECT_DOUBLE_EQ(a.x(2000), 100);
    EXPECT_EQ(a.time(150), 2500);
}

TEST(TimeAxis, ZoomKeepsTheAnchorInPlace) {
    TimeAxis a{0, 1000, 100};
    const EpochMillis under = a.time(25);
    a.zoom(4, 25);
    EXPECT_EQ(a.to - a.from, 250);
    EXPECT_NEAR(a.x(under), 25, 0.5);
    a.zoom(1e9, 50); // stops at the smallest span
    EXPECT_EQ(a.to - a.from, TimeAxis::kMinSpan);
}

TEST(TimeAxis, PanMovesByPixels) {
    TimeAxis a{0, 1000, 100};
    a.pan(10); // drag right: earlier times come into view
    EXPECT_EQ(a.from, -100);
    EXPECT_EQ(a.to, 900);
}

TEST(TimeAxis, FitAddsAMargin) {
    TimeAxis a;
    a.fit(1000, 2000, 0.1);
    EXPECT_EQ(a.from, 900);
    EXPECT_EQ(a.to, 2100);
}

TEST(TimeAxis, HitTestFindsTheNearestItemWithinTolerance) {
    const std::vector<EpochMillis> times{100, 200, 205, 600};
    const TimeAxis a{0, 1000, 1000};
    const auto id = [](EpochMillis t) { return t; };
    EXPECT_EQ(hitTest(times, id, a, 203), 2);
    EXPECT_EQ(hitTest(times, id, a, 99), 0);
    EXPECT_EQ(hitTest(times, id, a, 400), -1);
    EXPECT_EQ(hitTest(times, id, a, 603), 3);
    EXPECT_EQ(hitTest(std::vector<EpochMillis>{}, id, a, 5), -1);
}
