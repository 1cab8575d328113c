#pragma once
// What the simulator's actors (sim/server, sim/caller, sim/outbox_relay,
// sim/receipt_listener) share: the faults a caller injects, the messages
// between them, and SimContext (settings, producer, truth, counters).
// Internal to sim/: nothing outside it includes this.
#include "sim/simulator.h"

#include "models/anomaly_json.h"
#include "models/domain.h"
#include "models/timestamp.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace callscope {

class KafkaProducer;

namespace sim {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

// What a caller injects into one business action.
enum class Fault : std::uint8_t {
    None,
    Crash, // healthy: server dies after its placeholder, a later retry re-occupies
    Stuck,
    DigestConflict,
    DuplicateCaller,
    KeyRotation,
    ConcurrentExecution,
    ExpiredReplay,
    ReceiptMissing,
    StateMismatch,
    ReceiptRegression,
    CallerStuck,
    OrphanReceipt,
    CallIdRewritten,   // a gateway writes its own id over the callId; the server answers the caller
    CallIdRegenerated, // an async branch loses the callId and sends the request under a new one
    EffectMissing,     // the record turns SUCCESS but the business row is never written
};

Fault faultFor(AnomalyKind k);

std::string sha256Hex(const std::string& text);

std::string randomHex(std::mt19937_64& rng, int chars);

// ---- messages between the simulated parts ---------------------------------

struct Request {
    std::string callId, digest, source, traceId;
    std::string bizNo;       // the business row's key (callscope_sim_orders.order_no)
    bool skipEffect = false; // effect_missing: SUCCESS without the business row
    std::string replyCallId; // the callId the caller knows the answer by ("" = callId)
    int attempt = 0;         // the caller's send number; 0 = nobody reads the answer
    int callerIndex = -1;    // -1 = nobody to answer
    int processingMs = 10;
    bool businessFails = false;
    bool dieAfterPlaceholder = false;
    bool brokenPlaceholder = false; // check-then-act bug: the placeholder is not atomic
    bool dropReceipt = false;       // the relay loses the terminal receipt
    bool wrongReceipt = false;      // the relay publishes the opposite terminal status
    bool orphanReceiptOnly = false; // publish a receipt for a callId with no record
    std::int64_t ttlMs = 0;
    // The server, which sees what really happened, records these faults:
    bool truthOnOverlap = false; // concurrent_execution: this run overlapped a running one
    bool truthOnExecute = false; // expired_replay: this retry executed again
    EpochMillis initiatedAt = 0;
};

enum class ResponseKind : std::uint8_t { Done, InProgress, Rejected };

struct Response {
    std::string callId;
    int attempt = 0;
    ResponseKind kind = ResponseKind::Done;
    RecordStatus status = RecordStatus::Success;
};

struct ReceiptNote {
    std::string callId;
    int version = 0;
    RecordStatus status = RecordStatus::Processing;
};

using CallerMessage = std::variant<Response, ReceiptNote>;

class SimCaller;
class SimServer;

// Everything the parts share: settings, Kafka producer, truth, counters.
struct SimContext {
    const Config& config;
    const SimOptions& opt;
    std::string callerTopic;
    std::string runId;
    KafkaProducer* producer = nullptr;
    std::vector<std::unique_ptr<SimServer>> servers;
    std::vector<std::unique_ptr<SimCaller>> callers;

    std::mutex mutex;                               // guards the members below
    std::unordered_map<std::string, int> callOwner; // callId -> caller index
    std::vector<AnomalyLine> truth;
    std::set<std::string> truthKeys;
    std::string failure;
    SimStats stats;

    std::atomic<std::int64_t> attempts{0}, callerEvents{0}, receiptsPublished{0},
        receiptsDuplicated{0}, receiptsDropped{0}, receiptsSeen{0};
    std::atomic<bool> failed{false};
    std::atomic<std::uint64_t> serverPick{0};

    // A server stamps arrived_at, then inserts the placeholder. Two attempts
    // of one callId on a loaded machine could commit in the other order, and
    // the record's created_at would be later than an attempt that came first:
    // data that says "an earlier incarnation" (expired_replay) where none was
    // injected. Stamp and placeholder are one step per callId (striped locks).
    std::array<std::mutex, 64> arrivalLocks;
    std::mutex& arrivalLock(const std::string& callId) {
        return arrivalLocks[std::hash<std::string>{}(callId) % arrivalLocks.size()];
    }

    // Out of line (sim/sim_context.cpp), where SimServer and SimCaller are
    // complete: the vectors above own them.
    SimContext(const Config& c, const SimOptions& o);
    ~SimContext();

    void fail(const std::string& why);
    void addTruth(AnomalyLine line);
    void publishEvent(const std::string& key, const std::string& json);
    void submit(Request r);
    void deliver(int callerIndex, CallerMessage m);
};

} // namespace sim
} // namespace callscope
