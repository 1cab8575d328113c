#pragma once
// What the dashboard shows, as immutable values the model thread hands to the
// GUI thread: a snapshot of the live state, and one callId in detail.
#include "models/call_group.h"
#include "models/detection_engine.h"
#include "models/diagnosis.h"
#include "models/source_health.h"
#include "models/timeline.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace callscope {

struct InstanceStats {
    std::string instance;
    int calls = 0;            // callIds this instance acted on
    int retries = 0;          // sends beyond the first
    int duplicateCallers = 0; // duplicate_caller anomalies naming it
    int conflicts = 0;        // digest_conflict anomalies naming it
    int anomalies = 0;        // open anomalies naming it
    bool caller = false;      // it sends: caller events, attempts' source_instance
    bool server = false;      // it serves: receipts' sourceInstance
    // Its lane over the snapshot's [laneFrom, laneTo), kLaneBuckets each
    // (empty when nothing fell in it): calls by the instance's first act on
    // each, and retries (sends beyond the first).
    std::vector<std::uint16_t> callsOverTime, retriesOverTime;
    struct Mark {
        EpochMillis at = kNoTime;
        bool migration = false; // duplicate_caller's cause: migration, else concurrent
    };
    std::vector<Mark> duplicates; // duplicate_caller anomalies naming it, at their first event
};

// The Instances view's lanes: this many buckets from the oldest call held
// (at most a day back, at least a minute) to now.
inline constexpr std::size_t kLaneBuckets = 120;
inline constexpr std::size_t kMaxLaneMarks = 500; // duplicate markers kept per instance

// PROCESSING age buckets of the overview histogram.
inline constexpr std::array<const char*, 8> kAgeBucketNames{"0-1s", "1-5s",  "5-30s",  "30s-1m",
                                                            "1-5m", "5-15m", "15m-1h", "1h+"};
inline constexpr std::array<EpochMillis, 7> kAgeBucketLimits{1000,    5000,    30'000,   60'000,
                                                             300'000, 900'000, 3'600'000};

struct DashboardSnapshot {
    EpochMillis at = kNoTime;
    std::size_t calls = 0;                // tracked: held in full, or packed
    std::size_t packedCalls = 0;          // of them, packed (live: final and healthy)
    std::array<int, 3> recordsByStatus{}; // PROCESSING, SUCCESS, FAILED
    double receiptsPerSec = 0, attemptsPerSec = 0, callerEventsPerSec = 0, recordsPerSec = 0;
    std::array<int, kAgeBucketNames.size()> processingAges{};
    std::vector<AnomalyChange> changes; // since the previous snapshot, in order
    std::vector<SourceHealth> sources;
    std::int64_t rejected = 0;
    std::map<std::string, std::int64_t> rejectedByReason;
    std::vector<std::string> rejectedSamples;             // "where: reason: sample"
    std::map<std::string, std::int64_t> lostByPartition;  // deleted by retention before read
    std::int64_t evictedCalls = 0, evictedOverBudget = 0; // left memory (retention, budget)
    std::int64_t forgottenAnomalies = 0;                  // anomalies forgotten over the budget
    std::size_t storeBytes = 0, storeBudget = 0;
    std::vector<InstanceStats> instances;
    EpochMillis laneFrom = kNoTime, laneTo = kNoTime; // the instances' lanes span
    bool statsIncluded = false; // the 1 Hz part (counts, ages, instances) is fresh
    bool windowJudged = false;  // every source has loaded the window or is down
};

// Live, calls final and healthy wait packed (CallStore::freeze), millions of
// them: what the counts need of them is kept as they freeze, thaw and are
// forgotten (CallStore::observeFrozen), so that the 1 Hz counts read none.
// Their lanes are kept in steps of a second, or of `horizon` / 3,600 when
// they stay packed longer than an hour (at most 3,600 steps an instance).
class PackedCallTally {
public:
    explicit PackedCallTally(Millis horizon = Millis{3'600'000});
    // A call packed (+1), or taken back or forgotten (-1).
    void add(const CallState& call, std::span<const CallEvent> events, int sign);
    void clear() { *this = PackedCallTally(Millis{m_stepMs * 3600}); }
    std::int64_t calls() const { return m_calls; }
    // The earliest act counted, kNoTime when none (the lanes' start).
    EpochMillis earliest() const;

private:
    friend void countCalls(const CallStore&, const std::vector<Anomaly>&, EpochMillis,
                           DashboardSnapshot&, const PackedCallTally*);
    struct Instance {
        std::int64_t calls = 0, retries = 0, callerActs = 0, serverActs = 0;
        // step (time / m_stepMs) -> calls first acted on, retries
        std::map<std::int64_t, std::array<std::int32_t, 2>> bySecond;
    };
    std::int64_t m_stepMs = 1000;
    std::int64_t m_calls = 0;
    std::array<std::int64_t, 3> m_records{};       // by RecordStatus
    std::map<std::uint32_t, Instance> m_instances; // by the store's instance id
};

// The 1 Hz figures of the dashboard from the store and the anomalies: records
// by status, PROCESSING records by age, and per instance (attempts and caller
// events) the calls it acted on, its retries and the anomalies naming it. The
// packed calls from `packed` when given (live), else read one by one.
void countCalls(const CallStore& store, const std::vector<Anomaly>& anomalies, EpochMillis now,
                DashboardSnapshot& out, const PackedCallTally* packed = nullptr);

struct CallDetail {
    std::string query; // what was asked (a callId or a bizNo)
    bool found = false;
    std::string message; // why not, or how it was read
    CallTimeline timeline;
    Diagnosis diagnosis;
    std::vector<Anomaly> anomalies;
    std::vector<std::string> otherMatches; // a bizNo can name several callIds
    CallGroup group; // its key-rotation group or rewritten pair, or the calls it is compared with
    std::uint64_t generation = 0;
};

} // namespace callscope
