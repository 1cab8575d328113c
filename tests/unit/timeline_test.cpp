// A call's timeline: the server record and caller lanes on one time axis.
#include "models/timeline.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

TEST(Timeline, BothLanesAsBandsOnOneAxis) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    const CallTimeline t = buildTimeline(s.store, s.store.find("c1"), T0 + 100);
    std::vector<std::string> server, caller;
    for (const StateBand& b : t.bands)
        (b.lane == Lane::ServerRecord ? server : caller).push_back(b.state);
    EXPECT_EQ(server, (std::vector<std::string>{"ABSENT", "PROCESSING", "SUCCESS"}));
    EXPECT_EQ(caller,
              (std::vector<std::string>{"INITIATED", "AWAITING_RESPONSE", "CONFIRMED_SUCCESS"}));
    EXPECT_EQ(t.entries.size(), 8u);
    EXPECT_TRUE(std::is_sorted(t.entries.begin(), t.entries.end(),
                               [](const auto& a, const auto& b) { return a.at < b.at; }));
}
