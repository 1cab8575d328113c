// callid_rewritten (SPEC §3, models/detectors/callid_rewritten.cpp): a caller
// event and a server attempt share a traceId under different callIds, each
// seen at one end only. What must be flagged, and what must not.
#include "models/diagnosis.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace callscope;
using namespace callscope::test;

namespace {

// The caller's view of c1, which a gateway forwarded to the server as gw-9.
void rewritten(Scenario& s, EpochMillis t) {
    s.traceId = "4bf92f3577b34da6";
    s.caller("c1", CallerState::Initiated, t, 0, "order-api-7", "ORD-1", D(5));
    s.caller("c1", CallerState::AwaitingResponse, t + 1, 1, "order-api-7", "ORD-1", D(5));
    s.record("gw-9", RecordStatus::Success, t + 3, t + 40, D(5), 0, "order-api-7");
    s.attempt("gw-9", AttemptOutcome::Executed, t + 3, t + 40, "order-api-7", D(5));
    s.receipt("gw-9", RecordStatus::Success, 1, t + 45, D(5));
    s.caller("c1", CallerState::ConfirmedSuccess, t + 41, 1, "order-api-7", "ORD-1", D(5));
    s.traceId.clear();
}

} // namespace

TEST(CallIdRewritten, OneTraceUnderTwoCallIdsBetweenCallerAndServerIsCritical) {
    Scenario s;
    rewritten(s, T0);
    // One call under two names: not a key rotation as well.
    EXPECT_EQ(s.open(T0 + H), Set{"callid_rewritten:c1,gw-9"});
    const Anomaly* a = s.find(AnomalyKind::CallIdRewritten);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_EQ(a->callIds, (std::vector<std::string>{"c1", "gw-9"}));
    EXPECT_EQ(a->cause, "callid_rewritten_in_transit");
    EXPECT_NE(a->summary.find("4bf92f3577b34da6"), std::string::npos) << a->summary;
    EXPECT_NE(a->summary.find("order-api-7"), std::string::npos) << a->summary;
    // The caller's send and the server's attempt are the evidence.
    ASSERT_EQ(a->evidence.size(), 2u);
    EXPECT_EQ(a->evidence[0].callId, "c1");
    EXPECT_EQ(a->evidence[1].callId, "gw-9");
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_EQ(d.cause, Cause::CallIdRewrittenInTransit);
    EXPECT_TRUE(d.steps.front().decisive);
    EXPECT_EQ(d.siblingCallIds, std::vector<std::string>{"gw-9"});
}

// 坑二 within one trace: both callIds reached the server and both are the
// caller's own, so the callId was made again, not replaced on the way.
TEST(CallIdRewritten, TwoCallIdsSeenAtBothEndsInOneTraceAreNotARewrite) {
    Scenario s;
    s.traceId = "trace-1";
    s.healthy("c1", T0, D(5), "ORD-1");
    s.healthy("c2", T0 + 30, D(5), "ORD-1");
    EXPECT_EQ(s.open(T0 + H), Set{"key_rotation:c1,c2"});
    EXPECT_EQ(s.find(AnomalyKind::KeyRotation)->cause, "callid_regenerated");
}

// Live: the server's side may be read before the caller's callId reaches it;
// nothing is said until both sources are read a grace past both.
TEST(CallIdRewritten, LiveWaitsForBothSourcesBeforeJudging) {
    Scenario s;
    rewritten(s, T0);
    s.engine.setSettled(false);
    s.engine.setReceiptCoverage(T0, T0 + 100);
    s.engine.setRecordCoverage(T0 + 100);
    s.engine.evaluateAll(s.store, T0 + 100);
    EXPECT_EQ(s.engine.takeChanges().size(), 0u);
    s.engine.setReceiptCoverage(T0, T0 + 2 * MIN);
    s.engine.setRecordCoverage(T0 + 2 * MIN);
    s.engine.tick(s.store, T0 + 2 * MIN);
    const auto changes = s.engine.takeChanges();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].anomaly.kind, AnomalyKind::CallIdRewritten);
}

// A traceId every call carries ("-", a constant) ties nothing together.
TEST(CallIdRewritten, APlaceholderTraceIdLinksNothing) {
    Scenario s;
    s.traceId = "-";
    for (int i = 0; i < 8; ++i) {
        const std::string id = "c" + std::to_string(i);
        const EpochMillis t = T0 + i * MIN;
        if (i % 2)
            s.caller(id, CallerState::Initiated, t, 0, "api-1", "ORD-" + id, D(i));
        else
            s.attempt(id, AttemptOutcome::Executed, t, t + 5, "api-1", D(i));
    }
    s.open(T0 + H);
    EXPECT_EQ(s.find(AnomalyKind::CallIdRewritten), nullptr);
    for (std::uint32_t i = 0; i < s.store.size(); ++i)
        EXPECT_TRUE(s.store.traceLinksOf(i).empty()) << s.store.callId(i);
}

// Retention compacts the store: the pair is still found after it.
TEST(CallIdRewritten, ThePairSurvivesCompaction) {
    Scenario s;
    s.healthy("c0", T0 - MIN, D(1), "ORD-0");
    rewritten(s, T0);
    s.store.compact([&](std::uint32_t i) { return s.store.callId(i) != "c0"; });
    ASSERT_EQ(s.store.traceLinksOf(s.store.find("c1")).size(), 1u);
    EXPECT_EQ(s.store.traceLinksOf(s.store.find("c1"))[0]->other, s.store.find("gw-9"));
}
