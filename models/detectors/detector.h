#pragma once
// What every detection of SPEC §3 works on and answers. Each detector is a
// function in a file named after its kind (models/detectors/<kind>.cpp) over
// one call's facts, read once from the store; the engine
// (models/detection_engine) runs them on every call it re-judges, keeps the
// anomalies they find, resolves those that stop holding and wakes calls when
// a threshold passes. key_rotation judges a group of calls instead.
#include "models/anomaly.h"
#include "models/call_store.h"

#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace callscope {

// Which inputs the deployment reads (SPEC §3 "needs").
struct DetectionSources {
    bool attempts = true;     // the attempt log is read
    bool receipts = true;     // receipt topics are read
    bool callerEvents = true; // caller events are read
    bool records = true;      // the idempotency record is read (false: Kafka only)
    bool probe = false;       // a business-effect probe is configured ([probe] sql)
};

// How far the sources have been read: a detection never judges what is not
// read yet (a lagging or failed source cannot show the call moving on).
struct Coverage {
    // The Kafka topics (receipts and caller events, one consumer) read over [from, to].
    EpochMillis kafkaFrom = kNoTime, kafkaTo = kNoTime;
    EpochMillis recordsReadTo = kNoTime; // the tables as they stood then; kNoTime: not reported
    bool settled = false;                // batch mode: everything there is has been loaded
};

// One anomaly as a detector finds it, before the engine keeps it.
struct Finding {
    AnomalyKind kind;
    Severity severity = Severity::Warning;
    std::string subject; // identity with the kind
    std::vector<std::string> callIds, instances, digests;
    std::string cause; // AnomalyLine::cause
    std::string summary;
    std::vector<Evidence> evidence;
    EpochMillis since = kNoTime; // the waiting kinds: when the wait began
};

// The identity of an anomaly among those the engine keeps.
std::string anomalyKey(AnomalyKind kind, const std::string& subject);

// One call as every detector sees it, with what several of them derive.
class CallFacts {
public:
    // `kept`: the engine's anomalies by anomalyKey, to tell whether one is open.
    CallFacts(const CallStore& store, std::uint32_t call, EpochMillis now,
              const DetectThresholds& thresholds, const DetectionSources& sources,
              const Coverage& coverage, const std::unordered_map<std::string, std::size_t>& kept);

    const CallStore& store;
    const std::uint32_t call;
    const CallState& state;
    const std::span<const CallEvent> events;
    const EpochMillis now;
    const DetectThresholds& thresholds;
    const DetectionSources& sources;
    const Coverage& coverage;

    EpochMillis updatedAt;   // the record's updated_at (kNoTime without a record)
    std::string firstSource; // the record's first_source ("" when unknown)
    // Receipts at a glance.
    unsigned terminalReceipts = 0;               // a bit per terminal RecordStatus received
    std::optional<std::int32_t> clashingVersion; // a version delivered with two statuses
    EpochMillis firstReceiptAt = kNoTime;

    const std::string& callId() const; // made on first use: most calls find nothing
    bool recordIs(RecordStatus status) const {
        return state.hasRecord() && state.recordStatus() == status;
    }
    bool recordTerminal() const { return state.hasRecord() && isTerminal(state.recordStatus()); }
    // An anomaly of this kind is kept for this call.
    bool kept(AnomalyKind kind) const;
    // A finding about this call alone, named after it.
    Finding single(AnomalyKind kind, Severity severity) const;
    Evidence evidence(const CallEvent& e) const;
    void addOwnDigest(Finding& f) const; // the call's own digest, when it has one
    EpochMillis timeOf(std::int32_t dt) const { return store.timeOf(state, dt); }
    std::string instance(const CallEvent& e) const { return store.instance(e.instance); }

private:
    const std::unordered_map<std::string, std::size_t>& m_kept;
    mutable std::string m_callId;
};

// What a per-call detector answers.
struct Verdict {
    std::optional<Finding> finding; // it holds: the anomaly as it stands now
    bool keep = false;              // cannot be judged yet: a kept anomaly stays as it is
    EpochMillis wakeAt = kNoTime;   // judge this call again then
    void wake(EpochMillis at) {
        if (wakeAt == kNoTime || at < wakeAt)
            wakeAt = at;
    }
};

// A readable description of one event ("receipt v2 SUCCESS from pay-svc-1").
std::string describeEvent(const CallStore& store, std::uint32_t call, const CallEvent& e);

// Event predicates the detectors share.
bool executes(const CallEvent& e); // an EXECUTED or REOCCUPIED attempt
bool isCallerTerminal(std::uint8_t code);
bool isCallerWaiting(std::uint8_t code); // TIMEOUT_UNKNOWN or AWAITING_RECEIPT
// The record status a caller's terminal state confirms.
RecordStatus confirmedStatus(std::uint8_t callerCode);
// The time of a call's earliest event.
EpochMillis firstEventAt(const CallStore& store, std::uint32_t call);

// The per-call detectors, in the order the engine runs them.
Verdict judgeStuckProcessing(const CallFacts& call);
Verdict judgeDigestConflict(const CallFacts& call);
Verdict judgeDuplicateCaller(const CallFacts& call);
Verdict judgeConcurrentExecution(const CallFacts& call);
Verdict judgeExpiredReplay(const CallFacts& call);
Verdict judgeReceiptMissing(const CallFacts& call);
Verdict judgeStateMismatch(const CallFacts& call);
Verdict judgeReceiptRegression(const CallFacts& call);
Verdict judgeCallerStuck(const CallFacts& call);
Verdict judgeOrphanReceipt(const CallFacts& call);
Verdict judgeEffectMissing(const CallFacts& call);

struct CallDetector {
    AnomalyKind kind;
    Verdict (*judge)(const CallFacts&);
    // Whether the anomaly resolves when it stops holding: the waiting kinds
    // do (the record finishes, the receipt comes); the others record what
    // happened, which stays so.
    bool resolves;
};
inline constexpr CallDetector kCallDetectors[] = {
    {AnomalyKind::StuckProcessing, judgeStuckProcessing, true},
    {AnomalyKind::DigestConflict, judgeDigestConflict, false},
    {AnomalyKind::DuplicateCaller, judgeDuplicateCaller, false},
    {AnomalyKind::ConcurrentExecution, judgeConcurrentExecution, false},
    {AnomalyKind::ExpiredReplay, judgeExpiredReplay, false},
    {AnomalyKind::ReceiptMissing, judgeReceiptMissing, true},
    {AnomalyKind::StateMismatch, judgeStateMismatch, false},
    {AnomalyKind::ReceiptRegression, judgeReceiptRegression, false},
    {AnomalyKind::CallerStuck, judgeCallerStuck, true},
    {AnomalyKind::OrphanReceipt, judgeOrphanReceipt, true},
    {AnomalyKind::EffectMissing, judgeEffectMissing, false},
};

// key_rotation over one group of calls sharing a digest or bizNo within the
// window (the engine finds the group): named after its earliest callId.
// `self`: the member being judged, whose digest or bizNo ties the group.
Finding judgeKeyRotation(const CallStore& store, const std::vector<std::uint32_t>& members,
                         std::uint32_t self, const DetectionSources& sources);
// The member a key-rotation group is named after: its earliest.
std::uint32_t keyRotationSubject(const CallStore& store, const std::vector<std::uint32_t>& members);
// Why the request came again under a new callId: a timeout of an earlier
// member before each later one's first event (key_rotated_after_timeout), a
// later one with none (callid_regenerated), or no caller events to tell (unknown).
Cause keyRotationCause(const CallStore& store, const std::vector<std::uint32_t>& members);

// callid_rewritten over two calls that carried one traceId: the pair when
// one was seen only at the caller and the other only at the server.
struct RewrittenPair {
    std::uint32_t callerSide, serverSide;
};
std::optional<RewrittenPair> rewrittenPair(const CallStore& store, const TraceLink& link);
// The anomaly, named after the caller's callId.
Finding judgeCallIdRewritten(const CallStore& store, const TraceLink& link, RewrittenPair pair);

} // namespace callscope
