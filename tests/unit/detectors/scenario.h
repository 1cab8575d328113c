#pragma once
// The detection tests' world: a CallStore fed observation by observation and
// a DetectionEngine judging it, with builders for each source (record,
// attempts, receipts, caller events) and a healthy call to start from.
// Header-only, shared by tests/unit/detectors/*_test.cpp and the engine's tests.
#include "models/detection_engine.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace callscope::test {

inline constexpr EpochMillis T0 = 1'716'200'000'000; // 2024-05-20T10:13:20Z
inline constexpr EpochMillis S = 1000, MIN = 60'000, H = 3'600'000;

inline std::string D(int n) { // a SHA-256-looking digest
    std::string s = std::to_string(n);
    return std::string(64 - s.size(), 'a') + s;
}

class Scenario {
public:
    explicit Scenario(DetectionSources sources = {}) : engine(DetectThresholds{}, sources) {}

    std::string traceId; // carried by the attempts and caller events added while set

    Scenario& record(const std::string& id, RecordStatus st, EpochMillis created,
                     EpochMillis updated, const std::string& digest = D(1), int lock = 0,
                     const std::string& source = "api-1", EpochMillis ttl = 24 * H) {
        RecordObservation o{id, digest, st, source, lock, created, updated, created + ttl};
        store.add(o);
        return *this;
    }
    Scenario& attempt(const std::string& id, AttemptOutcome out, EpochMillis arrived,
                      EpochMillis finished, const std::string& source = "api-1",
                      const std::string& digest = D(1)) {
        AttemptObservation o;
        o.id = ++m_attemptId;
        o.callId = id;
        o.digest = digest;
        o.sourceInstance = source;
        o.outcome = out;
        o.arrivedAt = arrived;
        o.finishedAt = finished;
        o.traceId = traceId;
        store.add(o);
        return *this;
    }
    Scenario& receipt(const std::string& id, RecordStatus st, int version, EpochMillis at,
                      const std::string& digest = D(1)) {
        ReceiptObservation o;
        o.callId = id;
        o.status = st;
        o.version = version;
        o.finishedAt = at;
        o.origin.kafkaTimestamp = at;
        o.sourceInstance = "pay-svc-1";
        o.digest = digest;
        store.add(o);
        return *this;
    }
    Scenario& caller(const std::string& id, CallerState st, EpochMillis at, int attempt = 1,
                     const std::string& instance = "api-1", const std::string& bizNo = "B1",
                     const std::string& digest = D(1)) {
        CallerObservation o;
        o.callId = id;
        o.state = st;
        o.at = at;
        o.instance = instance;
        o.attempt = attempt;
        o.bizNo = bizNo;
        o.digest = digest;
        o.traceId = traceId;
        store.add(o);
        return *this;
    }
    // A healthy call: one execution, a receipt, a confirmed caller.
    Scenario& healthy(const std::string& id, EpochMillis t, const std::string& digest,
                      const std::string& bizNo, const std::string& inst = "api-1") {
        caller(id, CallerState::Initiated, t, 0, inst, bizNo, digest);
        caller(id, CallerState::AwaitingResponse, t + 1, 1, inst, bizNo, digest);
        record(id, RecordStatus::Processing, t + 2, t + 2, digest, 0, inst);
        attempt(id, AttemptOutcome::Executed, t + 2, t + 40, inst, digest);
        record(id, RecordStatus::Success, t + 2, t + 40, digest, 0, inst);
        receipt(id, RecordStatus::Processing, 1, t + 10, digest);
        receipt(id, RecordStatus::Success, 2, t + 45, digest);
        caller(id, CallerState::ConfirmedSuccess, t + 41, 1, inst, bizNo, digest);
        return *this;
    }

    // kind -> callIds (comma-joined) of the open anomalies at `now`.
    std::set<std::string> open(EpochMillis now, bool settled = true) {
        engine.setSettled(settled);
        engine.setReceiptCoverage(T0 - H, now);
        engine.evaluateAll(store, now);
        std::set<std::string> out;
        for (const Anomaly& a : engine.anomalies()) {
            if (!a.open)
                continue;
            std::string ids;
            for (const auto& id : a.callIds)
                ids += (ids.empty() ? "" : ",") + id;
            out.insert(std::string(toString(a.kind)) + ":" + ids);
        }
        return out;
    }
    const Anomaly* find(AnomalyKind k) const {
        for (const Anomaly& a : engine.anomalies())
            if (a.kind == k)
                return &a;
        return nullptr;
    }

    CallStore store;
    DetectionEngine engine;

private:
    std::int64_t m_attemptId = 0;
};

using Set = std::set<std::string>;

} // namespace callscope::test
