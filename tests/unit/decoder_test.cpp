// Receipt and caller-event decoding: the mapping, and every malformed class.
#include "connectors/message_decoder.h"

#include <gtest/gtest.h>

using namespace callscope;

namespace {

const char* kReceipt =
    R"({"callId":"cid-20240520001","status":"SUCCESS","resultRef":"result-store/2024/05/20/xxx",)"
    R"("finishedAt":"2024-05-20T10:30:00Z","version":1,"sourceInstance":"pay-svc-3",)"
    R"("requestDigest":"9f2c"})";
const char* kEvent =
    R"({"callId":"cid-20240520001","state":"TIMEOUT_UNKNOWN","at":"2024-05-20T10:29:03.120Z",)"
    R"("instance":"order-api-7","attempt":1,"bizNo":"ORD-88812","requestDigest":"9f2c",)"
    R"("traceId":"4bf92f3577b34da6"})";

std::string receiptWhy(const std::string& payload) {
    MessageDecoder d{KafkaConfig{Config{}.kafka}};
    ReceiptObservation r;
    std::string why;
    return d.decodeReceipt(payload, {}, r, why) ? "ok" : why;
}

std::string eventWhy(const std::string& payload) {
    MessageDecoder d{KafkaConfig{Config{}.kafka}};
    CallerObservation e;
    std::string why;
    return d.decodeCallerEvent(payload, {}, e, why) ? "ok" : why;
}

} // namespace

TEST(Decoder, ReadsTheSpecReceipt) {
    MessageDecoder d{Config{}.kafka};
    ReceiptObservation r;
    std::string why;
    ASSERT_TRUE(d.decodeReceipt(kReceipt, MessageOrigin{3, 17, 1716200999000}, r, why)) << why;
    EXPECT_EQ(r.callId, "cid-20240520001");
    EXPECT_EQ(r.status, RecordStatus::Success);
    EXPECT_EQ(r.version, 1);
    EXPECT_EQ(r.finishedAt, parseTimestamp("2024-05-20T10:30:00Z"));
    EXPECT_EQ(r.sourceInstance, "pay-svc-3");
    EXPECT_EQ(r.digest, "9f2c");
    EXPECT_EQ(r.resultRef, "result-store/2024/05/20/xxx");
    EXPECT_EQ(r.origin.partition, 3);
    EXPECT_EQ(r.origin.offset, 17);
}

TEST(Decoder, ReadsTheSpecCallerEventAndEpochMillis) {
    MessageDecoder d{Config{}.kafka};
    CallerObservation e;
    std::string why;
    ASSERT_TRUE(d.decodeCallerEvent(kEvent, {}, e, why)) << why;
    EXPECT_EQ(e.state, CallerState::TimeoutUnknown);
    EXPECT_EQ(e.at, 1716200943120);
    EXPECT_EQ(e.instance, "order-api-7");
    EXPECT_EQ(e.attempt, 1);
    EXPECT_EQ(e.bizNo, "ORD-88812");
    ASSERT_TRUE(d.decodeCallerEvent(
        R"({"callId":"c","state":"INITIATED","at":1716200943120,"instance":"i"})", {}, e, why));
    EXPECT_EQ(e.at, 1716200943120);
}

TEST(Decoder, OptionalFieldsMayBeAbsent) {
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"FAILED","version":2})"), "ok");
}

TEST(Decoder, MapsRenamedFieldsAndStatusWords) {
    Config c;
    c.kafka.receipt.callId = "id";
    c.kafka.receipt.status = "result";
    c.kafka.receipt.version = "seq";
    c.kafka.receipt.statusValues["SUCCESS"] = {"OK", "DONE"};
    MessageDecoder d{c.kafka};
    ReceiptObservation r;
    std::string why;
    ASSERT_TRUE(d.decodeReceipt(R"({"id":"c9","result":"DONE","seq":4})", {}, r, why)) << why;
    EXPECT_EQ(r.callId, "c9");
    EXPECT_EQ(r.status, RecordStatus::Success);
    EXPECT_EQ(r.version, 4);
    EXPECT_FALSE(d.decodeReceipt(R"({"id":"c9","result":"SUCCESS","seq":4})", {}, r, why));
    EXPECT_EQ(why, "unknown status");
}

// Fields are found whatever their order, message after message (the decoder
// tries the name it found at a key's position last time first), the first of
// a repeated key wins, and two fields mapped to one key take it in order.
TEST(Decoder, FieldsInAnyOrderRepeatedKeysAndSharedNames) {
    MessageDecoder d{Config{}.kafka};
    CallerObservation e;
    std::string why;
    for (int round = 0; round < 2; ++round) {
        ASSERT_TRUE(d.decodeCallerEvent(kEvent, {}, e, why)) << why;
        EXPECT_EQ(e.callId, "cid-20240520001");
        EXPECT_EQ(e.traceId, "4bf92f3577b34da6");
        ASSERT_TRUE(d.decodeCallerEvent(
            R"({"traceId":"t2","bizNo":"B2","at":1716200999000,"state":"INITIATED",)"
            R"("callId":"c2","callId":"c3","instance":"i2","attempt":2})",
            {}, e, why))
            << why;
        EXPECT_EQ(e.callId, "c2");
        EXPECT_EQ(e.traceId, "t2");
        EXPECT_EQ(e.bizNo, "B2");
        EXPECT_EQ(e.instance, "i2");
        EXPECT_EQ(e.attempt, 2);
    }

    Config c;
    c.kafka.callerEvent.callId = "id";
    c.kafka.callerEvent.traceId = "id";
    MessageDecoder shared{c.kafka};
    const std::string twice =
        R"({"id":"c1","id":"t1","state":"INITIATED","at":1716200999000,"instance":"i","attempt":1})";
    const std::string once =
        R"({"id":"c2","state":"INITIATED","at":1716200999000,"instance":"i","attempt":1})";
    for (const std::string& m : {twice, once, twice, once}) {
        ASSERT_TRUE(shared.decodeCallerEvent(m, {}, e, why)) << why << " " << m;
        EXPECT_EQ(e.callId, m == twice ? "c1" : "c2");
        EXPECT_EQ(e.traceId, m == twice ? "t1" : "");
    }
}

TEST(Decoder, EveryMalformedClassIsRefusedWithItsReason) {
    EXPECT_EQ(receiptWhy("not json at all"), "not JSON");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS","version":1} trailing)"), "not JSON");
    EXPECT_EQ(receiptWhy(R"(["callId","c"])"), "not a JSON object");
    EXPECT_EQ(receiptWhy(""), "not JSON");
    EXPECT_EQ(receiptWhy(R"({"status":"SUCCESS","version":1})"), "missing callId");
    EXPECT_EQ(receiptWhy(R"({"callId":"","status":"SUCCESS","version":1})"), "missing callId");
    EXPECT_EQ(receiptWhy(R"({"callId":42,"status":"SUCCESS","version":1})"), "wrong type: callId");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS","version":"1"})"),
              "wrong type: version");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS"})"), "missing version");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"DONE","version":1})"), "unknown status");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS","version":1,"finishedAt":"soon"})"),
              "bad timestamp: finishedAt");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS","version":1,"sourceInstance":7})"),
              "wrong type: sourceInstance");
    EXPECT_EQ(receiptWhy("{\"callId\":\"c\xff\xfe\",\"status\":\"SUCCESS\",\"version\":1}"),
              "invalid UTF-8");
    EXPECT_EQ(receiptWhy(R"({"callId":"c","status":"SUCCESS","version":1,"pad":")" +
                         std::string(kMaxMessageBytes, 'x') + "\"}"),
              "oversized");
    EXPECT_EQ(eventWhy(R"({"callId":"c","state":"WAITING","at":1,"instance":"i"})"),
              "unknown state");
    EXPECT_EQ(eventWhy(R"({"callId":"c","state":"INITIATED","instance":"i"})"), "missing at");
    EXPECT_EQ(eventWhy(R"({"callId":"c","state":"INITIATED","at":"2024-05-20","instance":"i"})"),
              "bad timestamp: at");
    EXPECT_EQ(eventWhy(R"({"callId":"c","state":"INITIATED","at":1,"attempt":"two"})"),
              "wrong type: attempt");
}

TEST(Decoder, SamplesArePrintableAndShort) {
    const std::string s = MessageDecoder::sampleOf(std::string("a\x01\nb") + std::string(300, 'z'));
    EXPECT_EQ(s.substr(0, 4), "a..b");
    EXPECT_EQ(s.size(), 163u);
}
