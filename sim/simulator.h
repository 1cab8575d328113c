#pragma once
// `callscope sim` (SPEC §6): drives a real PostgreSQL and Kafka exactly as the
// protocol of SPEC §1 does, with fault knobs that inject each anomaly kind of
// SPEC §3 and a ground-truth file of what was injected.
#include "connectors/config.h"
#include "models/anomaly_json.h"
#include "models/domain.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace callscope {

struct SimOptions {
    Millis duration{30'000};
    double rate = 20.0; // new business actions per second, over all callers
    std::uint64_t seed = 1;
    int callers = 3;
    int servers = 2;
    int workersPerServer = 6;
    std::map<AnomalyKind, double> faults; // per business action, at most one fault each
    // Healthy failures that must NOT look like anomalies: a server dies after
    // its placeholder and a later retry re-occupies the stale record.
    double crashRate = 0.0;
    // A callId made again for the same request with no timeout (an async
    // branch lost it): a key_rotation whose cause is callid_regenerated.
    double regeneratedRate = 0.0;
    std::string truthPath; // "" = no truth file
    std::string receiptTopic = "receipts.sim";
    std::string callerTopic; // "" = config's caller topic
    int partitions = 4;
    Millis requestTimeout{250};
    Millis staleTimeout{2'000};       // server re-occupies a PROCESSING older than this
    Millis recordTtl{24 * 3'600'000}; // expire_at = created_at + this
    Millis drainTimeout{30'000};
    double workScale = 1.0; // scales the servers' simulated work (0.01 for bulk data)
    // false when the topics exist and are the caller's own: the demo's
    // in-process mock cluster (then they are not checked for the marker).
    bool createTopics = true;
    // The simulator writes (and deletes expired rows) only when told which
    // database it may write into: the name the config's DSN connects to. It
    // then writes only into tables and topics it created (marked as its own).
    std::string allowWritesTo;
    // Called once the tables and topics exist, before traffic starts (the demo
    // opens its dashboard then: it refuses a database without the tables).
    std::function<void()> ready;
};

struct SimStats {
    std::int64_t calls = 0;
    std::int64_t attempts = 0;
    std::int64_t callerEvents = 0;
    std::int64_t receiptsPublished = 0;
    std::int64_t receiptsDuplicated = 0;
    std::int64_t receiptsDropped = 0;
    std::int64_t receiptsSeenByCallers = 0;
    std::int64_t timeouts = 0;
    std::int64_t unfinishedCalls = 0;
    std::map<AnomalyKind, std::int64_t> injected;
};

struct SimResult {
    bool ok = false;
    bool refused = false; // not allowed to write there (see SimOptions::allowWritesTo)
    std::string error;
    SimStats stats;
};

// Runs until the duration has passed and every started call has finished (or
// the drain timeout ran out), or until *stop becomes true.
SimResult runSimulation(const Config& config, const SimOptions& options,
                        const std::atomic<bool>* stop = nullptr);

// The injected anomalies as sorted JSON lines (nothing when path is empty);
// false with the error when the file cannot be written.
bool writeTruthFile(const std::string& path, const std::vector<AnomalyLine>& truth,
                    std::string& error);

// The sim's summary as one JSON line.
std::string toJsonLine(const SimStats& stats);

} // namespace callscope
