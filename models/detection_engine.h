#pragma once
// Every detection of SPEC §3 over the CallStore, incrementally: calls touched
// by a batch are re-judged, and calls waiting on a threshold (stuck records,
// missing receipts, waiting callers, orphan receipts) are re-judged when their
// deadline passes. Anomalies open, change and resolve; live modes forget them
// only after retention, or the oldest when the memory budget is reached.
#include "models/anomaly.h"
#include "models/call_store.h"
#include "models/detectors/detector.h"

#include <cstdint>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace callscope {

// The detections whose inputs are not read (SPEC §3 "needs"), each with why:
// they cannot fire, and the surfaces say so rather than let silence pass for
// health.
std::vector<std::pair<AnomalyKind, std::string>> detectionsOff(const DetectionSources& sources);

// Forgotten: the engine let the anomaly go (resolved longer ago than
// retention keeps, or the oldest over the memory budget); views drop it.
enum class ChangeKind : std::uint8_t { Opened, Changed, Resolved, Forgotten };

struct AnomalyChange {
    ChangeKind what;
    Anomaly anomaly; // as it is after the change
};

class DetectionEngine {
public:
    DetectionEngine(DetectThresholds thresholds, DetectionSources sources);

    // Re-judges the calls a batch touched (and the key-rotation groups they are in).
    void evaluate(const CallStore& store, const std::vector<std::uint32_t>& touched,
                  EpochMillis now);
    // Re-judges every call (after a window load, or after compaction).
    void evaluateAll(const CallStore& store, EpochMillis now);
    // Time passed: re-judges calls whose threshold deadline has come.
    void tick(const CallStore& store, EpochMillis now);

    // The store was compacted: old call index -> new (CallStore::npos when gone).
    void remap(const std::vector<std::uint32_t>& map);
    // Forgets anomalies resolved before `before` (live modes: they were
    // reported when they changed), so a long run does not keep every anomaly
    // it ever saw; their calls are no longer held unless another anomaly names
    // them. Returns how many were forgotten.
    std::size_t forgetResolved(const CallStore& store, EpochMillis before);
    // What the anomalies hold in memory (estimated like CallStore::memoryBytes).
    std::size_t memoryBytes() const;
    // Over the memory budget: forgets anomalies, resolved ones first, then
    // open ones, oldest detected first (live modes reported each when it
    // opened), until the estimate of what they and the calls only they name
    // hold (`perCall` bytes a call, not counting calls `leaving` anyway)
    // reaches `bytes`. Anomalies sharing a call go together, so no call stays
    // to re-open what was forgotten. Returns how many went; the calls no
    // remaining anomaly names are no longer held.
    std::size_t forgetOldest(const CallStore& store, std::size_t bytes, std::size_t perCall,
                             const std::vector<std::uint8_t>& leaving);

    // Receipts were read over [from, to]: receipt_missing is judged only there.
    void setReceiptCoverage(EpochMillis from, EpochMillis to);
    // The record tables have been read as they stood at `to`: a record is
    // judged stuck only from what was read after its threshold passed.
    void setRecordCoverage(EpochMillis to) {
        m_coverage.recordsReadTo = std::max(m_coverage.recordsReadTo, to);
    }
    // Batch mode: everything there is has been loaded, so a receipt without a
    // record is an orphan at once (live mode waits receipt_grace for the record).
    void setSettled(bool settled) { m_coverage.settled = settled; }

    std::vector<AnomalyChange> takeChanges();
    const std::vector<Anomaly>& anomalies() const { return m_anomalies; }
    std::vector<const Anomaly*> anomaliesOf(const std::string& callId) const;
    std::size_t openCount() const;
    // Calls that an anomaly names stay in memory (SPEC §2 retention) until
    // that anomaly is forgotten.
    bool holds(std::uint32_t call) const { return call < m_named.size() && m_named[call]; }
    // Key-rotation siblings of a call: the other callIds of its digest / bizNo.
    // A digest or bizNo shared by more than kMaxKeyRotationGroup calls is a
    // placeholder ("N/A", the digest of an empty request), not a business
    // action: it groups nothing and is reported once as a data-quality warning.
    std::vector<std::uint32_t> siblings(const CallStore& store, std::uint32_t call) const;
    static constexpr std::size_t kMaxKeyRotationGroup = 1000;
    // Placeholders found so far ("bizNo N/A shared by 100000 calls"), and those
    // found since the last call.
    const std::vector<std::string>& placeholders() const { return m_placeholderList; }
    std::vector<std::string> takeNewPlaceholders();

    const DetectionSources& sources() const { return m_sources; }

private:
    void judgeCall(const CallStore& s, std::uint32_t i, EpochMillis now);
    void judgeRewrite(const CallStore& s, std::uint32_t i, const TraceLink& link, EpochMillis now);
    // `judged`: the groups judged in this pass (hash of their members), so a
    // batch touching every member of a group judges it once, not once per member.
    void judgeGroupOf(const CallStore& s, std::uint32_t i, EpochMillis now,
                      std::unordered_set<std::uint64_t>* judged = nullptr);
    // `calls`: the store indices the finding names.
    void record(Finding&& f, EpochMillis now, std::initializer_list<std::uint32_t> calls);
    void record(Finding&& f, EpochMillis now, const std::vector<std::uint32_t>& calls);
    void settle(AnomalyKind kind, const std::string& subject, EpochMillis now);
    void schedule(std::uint32_t call, EpochMillis at);

    // Forgets the anomalies marked in `gone` (a Forgotten change for each),
    // rebuilding the index and the calls the others name.
    std::size_t forget(const CallStore& store, const std::vector<std::uint8_t>& gone);

    DetectThresholds m_t;
    DetectionSources m_sources;
    Coverage m_coverage; // recordsReadTo stays kNoTime when no source reports it (tests)

    std::vector<Anomaly> m_anomalies;
    std::unordered_map<std::string, std::size_t> m_index; // kind + subject -> anomaly
    std::vector<std::uint8_t> m_named; // call index -> an anomaly names it (kept in memory)
    mutable std::set<std::string> m_placeholderKeys;            // "bizNo N/A", "digest 9f2c…"
    mutable std::unordered_set<std::uint64_t> m_placeholderIds; // (isDigest << 32 | id)
    // Each placeholder by its text (isDigest, text): once a placeholder, a
    // key stays one, even when most of its calls have left the store; after
    // a compaction renumbers the ids, they are found again from these.
    mutable std::vector<std::pair<bool, std::string>> m_placeholderTexts;
    mutable bool m_placeholderIdsStale = false;
    mutable std::vector<std::string> m_placeholderList, m_newPlaceholders;
    std::vector<AnomalyChange> m_changes;
    std::uint64_t m_nextId = 1;

    struct Deadline {
        EpochMillis at;
        std::uint32_t call;
        bool operator>(const Deadline& o) const { return at > o.at; }
    };
    std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> m_deadlines;
};

} // namespace callscope
