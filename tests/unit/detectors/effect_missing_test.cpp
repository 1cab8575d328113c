// effect_missing (SPEC §3, models/detectors/effect_missing.cpp): the record is
// SUCCESS but the business-effect probe found no row. What must be flagged,
// and what must not.
#include "models/diagnosis.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <string>

using namespace callscope;
using namespace callscope::test;

namespace {

DetectionSources withProbe() {
    DetectionSources s;
    s.probe = true;
    return s;
}

void probe(Scenario& s, const std::string& id, bool found, bool failed = false) {
    ProbeObservation o{id, found, failed};
    EXPECT_NE(s.store.add(o), CallStore::npos);
}

} // namespace

TEST(EffectMissing, ASuccessWhoseProbeFindsNoRowIsCriticalWithItsBizNo) {
    Scenario s(withProbe());
    s.healthy("c1", T0, D(1), "ORD-7");
    EXPECT_EQ(s.open(T0 + 2 * MIN), Set{});
    probe(s, "c1", false);
    EXPECT_EQ(s.open(T0 + 2 * MIN), Set{"effect_missing:c1"});
    const Anomaly* a = s.find(AnomalyKind::EffectMissing);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_EQ(a->cause, "effect_missing");
    EXPECT_NE(a->summary.find("bizNo ORD-7"), std::string::npos) << a->summary;
    EXPECT_EQ(a->digests, std::vector<std::string>{D(1)});
    ASSERT_FALSE(a->evidence.empty());
    EXPECT_NE(a->evidence[0].what.find("SUCCESS"), std::string::npos) << a->evidence[0].what;

    // The diagnosis names the cause and the step that decided it.
    const Diagnosis d = diagnose(s.store, s.engine, s.store.find("c1"));
    EXPECT_EQ(d.cause, Cause::EffectMissing);
    ASSERT_FALSE(d.steps.empty());
    EXPECT_EQ(d.steps.back().question, "Did the business write happen?");
}

TEST(EffectMissing, AFoundRowAFailedQueryOrNoProbeFlagsNothing) {
    Scenario found(withProbe());
    found.healthy("c1", T0, D(1), "ORD-1");
    probe(found, "c1", true);
    EXPECT_EQ(found.open(T0 + 2 * MIN), Set{});

    Scenario failed(withProbe()); // the query failed: nothing is known
    failed.healthy("c1", T0, D(1), "ORD-1");
    probe(failed, "c1", false, true);
    EXPECT_EQ(failed.open(T0 + 2 * MIN), Set{});

    Scenario off; // no [probe]: the detection is off, whatever is stored
    off.healthy("c1", T0, D(1), "ORD-1");
    probe(off, "c1", false);
    EXPECT_EQ(off.open(T0 + 2 * MIN), Set{});
}

TEST(EffectMissing, OnlyASuccessIsProbedAndAProbeOfAnUnknownCallIdIsDropped) {
    Scenario s(withProbe());
    s.record("c1", RecordStatus::Failed, T0, T0 + 10);
    probe(s, "c1", false); // FAILED: no business row is expected
    s.open(T0 + 2 * MIN);
    EXPECT_EQ(s.find(AnomalyKind::EffectMissing), nullptr);
    ProbeObservation stray{"never-seen", false, false};
    EXPECT_EQ(s.store.add(stray), CallStore::npos);
}
