#pragma once
// The simulated caller (SPEC §1): starts business actions at its share of the
// rate, retries on timeouts, follows receipts, publishes its caller events and
// injects the faults it draws (recording each in the truth). Internal to sim/.
#include "sim/sim_context.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace callscope::sim {

class SimCaller {
public:
    SimCaller(SimContext& ctx, int index);

    const std::string& name() const { return m_name; }

    void post(CallerMessage m);

    // The caller's life: start business actions at its share of the rate
    // until `end`, then finish the calls it has open.
    std::int64_t run(SteadyTime end, SteadyTime drainEnd, const std::atomic<bool>* stop);

private:
    enum class TimerKind : std::uint8_t { ResponseTimeout, Retry, Escalate, FollowUp };
    struct Timer {
        SteadyTime due;
        std::string callId;
        TimerKind kind;
        int attempt;
        bool operator<(const Timer& o) const { return due > o.due; } // min-heap
    };
    struct Call {
        std::string callId, bizNo, digest, traceId;
        Fault fault = Fault::None;
        CallerState state = CallerState::Initiated;
        int attempt = 0; // sends so far
        bool awaitingAnswer = false;
        int highestVersion = 0;
        bool businessFails = false;
        bool ignoreReceipts = false;
        bool terminal = false; // confirmed or escalated
        int followUps = 0;     // fault steps still to come
        EpochMillis initiatedAt = 0;
        std::string siblingCallId; // callid_rewritten: the gateway's id for it
    };

    // -- starting a business action --
    Fault drawFault();
    std::string newCallId();
    void startCall();

    // -- the protocol --
    int processingMsFor(const Call& c, int attempt);
    void send(Call& c);
    void onTimer(const Timer& t);
    void onTimeout(Call& c);
    void onMessage(Response& m);
    void onMessage(ReceiptNote& m);
    void confirm(Call& c, RecordStatus s);
    void followUp(Call& c);
    void finishIfDone(const std::string& callId);

    // -- helpers --
    void schedule(const Call& c, TimerKind kind, std::int64_t afterMs, int attempt);
    void publishState(Call& c, CallerState s);
    AnomalyLine line(AnomalyKind kind, Severity sev, const Call& c,
                     std::vector<std::string> moreCallIds, std::vector<std::string> moreDigests,
                     std::string summary, std::string otherInstance = {},
                     std::string_view cause = {}) const;

    static constexpr int kMaxAttempts = 6;

    SimContext& m_ctx;
    int m_index;
    std::string m_name;
    std::mt19937_64 m_rng;
    std::uint64_t m_seq = 0;
    std::unordered_map<std::string, Call> m_calls;
    std::priority_queue<Timer> m_timers;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<CallerMessage> m_inbox;
};

} // namespace callscope::sim
