#include "models/anomaly_json.h"

#include <gtest/gtest.h>

using namespace callscope;

TEST(AnomalyJson, WritesTheSpecLineWithSortedCallIds) {
    AnomalyLine a;
    a.kind = AnomalyKind::KeyRotation;
    a.severity = Severity::Critical;
    a.callIds = {"cid-b", "cid-a", "cid-b"};
    a.instances = {"order-api-7"};
    a.digests = {"9f2c"};
    a.firstEventAt = 1716200940000;
    a.detectedAt = 1716201060000;
    a.summary = "digest 9f2c executed under 2 callIds";
    EXPECT_EQ(
        toJsonLine(a),
        R"({"type":"anomaly","kind":"key_rotation","severity":"critical","state":"open",)"
        R"("callIds":["cid-a","cid-b"],"instances":["order-api-7"],"digests":["9f2c"],)"
        R"("firstEventAt":"2024-05-20T10:29:00.000Z","detectedAt":"2024-05-20T10:31:00.000Z",)"
        R"("summary":"digest 9f2c executed under 2 callIds"})");
}

TEST(AnomalyJson, EscapesWhatJsonRequires) {
    EXPECT_EQ(jsonQuote("a\"b\\c\nd\x01"), R"("a\"b\\c\nd\u0001")");
}
