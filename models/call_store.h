#pragma once
// The per-callId store of SPEC §2: every observation becomes an event on one
// callId's timeline. Compact by design: interned callIds, instances, digests
// and bizNos, 12-byte events with times relative to the call's first event,
// enum states. Bounded by retention (see compact()).
#include "models/interner.h"
#include "models/observations.h"
#include "models/trace_index.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace callscope {

class FrozenCalls;

enum class EventType : std::uint8_t { Record, Attempt, Receipt, Caller };

inline constexpr std::int32_t kNoDt = INT32_MIN;
inline constexpr std::uint32_t kMaxInstanceId = (1u << 20) - 1; // later instances share it

// 12 bytes: one observation on a call's timeline.
struct CallEvent {
    std::int32_t dt;              // ms since the call's base time
    std::int32_t aux;             // record: lock_version; attempt: finished dt (kNoDt = open);
                                  // receipt: version; caller: attempt number
    std::uint32_t instance : 20;  // record: first_source; attempt/caller: source; receipt: server
    std::uint32_t digestSlot : 5; // 0 none, 1 the call's digest, 2.. its extra digests
    std::uint32_t flags : 2;      // see EventFlag
    std::uint32_t code : 3;       // RecordStatus / AttemptOutcome / receipt status / CallerState
    EventType type : 2;
};
static_assert(sizeof(CallEvent) == 12);

struct CallState;
// What a call's attempts were, in brief, for its tomb (CallStore::Tomb):
// when the latest arrived (kNoTime: none), and a bit for each (its arrival,
// instance and outcome hashed to one of 64).
struct AttemptPrint {
    EpochMillis last = kNoTime;
    std::uint64_t bits = 0;
    static std::uint64_t bitOf(EpochMillis arrived, std::uint32_t instance, std::uint8_t code);
};
AttemptPrint attemptPrintOf(const CallState& c, std::span<const CallEvent> events);

inline CallEvent makeEvent(std::int32_t dt, EventType type, std::uint8_t code,
                           std::uint8_t digestSlot, std::uint8_t flags, std::uint32_t instance,
                           std::int32_t aux) {
    CallEvent e{};
    e.dt = dt;
    e.aux = aux;
    e.instance = instance;
    e.digestSlot = digestSlot;
    e.flags = flags;
    e.code = code;
    e.type = type;
    return e;
}

enum EventFlag : std::uint8_t {
    DuplicateReceipt = 1,  // same version and status delivered again
    OutOfOrderReceipt = 2, // a lower version after a higher one
};

enum CallFlag : std::uint8_t {
    HasRecord = 1,
    RecordRecreated = 2, // a later created_at than the one seen before
    EffectProbed = 4,    // the business-effect probe asked about it
    EffectMissing = 8,   // ... and found no business row
    ProbeScheduled = 16, // a probe is due (the monitor's, once per call)
    ProbeSkipped = 32,   // ... or was not queued: the live queue was full
    Reported = 64,       // it left once while a window loaded (and came back): told already
};

// Events live in pooled blocks of 2^k, so a call costs no allocation of its own.
class EventPool {
public:
    static constexpr std::uint8_t kNone = 255;
    static constexpr int kChunkBits = 16; // 65,536 events a chunk
    std::uint32_t allocate(std::uint8_t sizeClass);
    void release(std::uint32_t handle, std::uint8_t sizeClass);
    CallEvent* at(std::uint32_t handle) {
        return m_chunks[handle >> kChunkBits].get() + (handle & ((1u << kChunkBits) - 1));
    }
    const CallEvent* at(std::uint32_t handle) const {
        return m_chunks[handle >> kChunkBits].get() + (handle & ((1u << kChunkBits) - 1));
    }
    std::size_t memoryBytes() const;

private:
    std::vector<std::unique_ptr<CallEvent[]>> m_chunks;
    std::uint32_t m_used = 1u << kChunkBits; // in the last chunk
    std::vector<std::uint32_t> m_free[kChunkBits + 1];
};

struct CallState {
    std::uint32_t baseSec = 0; // the call's first event, whole seconds since the epoch
    EpochMillis base() const { return std::int64_t(baseSec) * 1000; } // times are relative to it
    std::uint32_t digest = 0; // the call's own digest (the first seen)
    std::uint32_t bizNo = 0;
    std::uint32_t firstSource = 0;
    std::int32_t created = kNoDt;   // record created_at, dt
    std::int32_t updated = kNoDt;   // record updated_at, dt
    std::int32_t expireSec = kNoDt; // record expire_at, seconds since base
    std::uint32_t eventsAt = 0;     // EventPool handle
    std::uint16_t eventCount = 0;
    std::uint8_t eventClass = EventPool::kNone;
    std::uint8_t record = 0; // 0 none, else 1 + RecordStatus
    std::uint8_t caller = 0; // 0 none, else 1 + CallerState (latest by arrival)
    std::uint8_t flags = 0;
    std::uint16_t lockVersion = 0;

    bool hasRecord() const { return flags & HasRecord; }
    RecordStatus recordStatus() const { return static_cast<RecordStatus>(record - 1); }
};

// Two calls that carried one traceId (a caller event or an attempt each).
struct TraceLink {
    std::string traceId;
    std::uint32_t first = 0; // the call that carried it first
    std::uint32_t other = 0;
};

struct StoreCounters {
    // Events kept: record changes, attempts, receipts (duplicates included), caller events.
    std::int64_t records = 0, attempts = 0, receipts = 0, callerEvents = 0;
    std::int64_t duplicateReceipts = 0, outOfOrderReceipts = 0, unchangedRows = 0;
    std::int64_t droppedEvents = 0; // beyond 65,535 events on one call
};

class CallStore {
public:
    CallStore();
    ~CallStore();
    CallStore(CallStore&&) noexcept;
    CallStore& operator=(CallStore&&) noexcept;

    // Applies a batch; returns the indices of the calls it touched (unique).
    std::vector<std::uint32_t> apply(const ObservationBatch& batch);
    // The same, for a caller that judges nothing now (a window loading).
    void applyOnly(const ObservationBatch& batch);
    // The same for one observation each (tests, benchmarks); npos for a row
    // or an attempt of a call packed or gone read again (live: see Tomb).
    std::uint32_t add(const RecordObservation& o);
    std::uint32_t add(const AttemptObservation& o);
    std::uint32_t add(const ReceiptObservation& o);
    std::uint32_t add(const CallerObservation& o);
    // npos when the call is not in memory (it left before the probe answered).
    std::uint32_t add(const ProbeObservation& o);
    // The monitor schedules one probe per call.
    void markProbeScheduled(std::uint32_t call) { m_calls[call].flags |= ProbeScheduled; }
    void markProbeSkipped(std::uint32_t call) { m_calls[call].flags |= ProbeSkipped; }

    static constexpr std::uint32_t npos = UINT32_MAX;
    std::uint32_t find(std::string_view callId) const;
    // The calls whose caller events carry this bizNo.
    std::vector<std::uint32_t> findByBizNo(std::string_view bizNo) const;
    std::size_t size() const { return m_calls.size(); }
    const CallState& call(std::uint32_t i) const { return m_calls[i]; }
    // A call's events in arrival order.
    std::span<const CallEvent> events(std::uint32_t i) const {
        const CallState& c = m_calls[i];
        if (c.eventCount == 0)
            return {};
        return {m_pool.at(c.eventsAt), c.eventCount};
    }

    std::string callId(std::uint32_t i) const { return m_callIds.text(i + 1); }
    void prefetchTrace(std::string_view traceId) const { m_traces.prefetch(traceId); }
    std::string instance(std::uint32_t id) const { return m_instances.text(id); }
    std::string bizNo(std::uint32_t id) const { return m_bizNos.text(id); }
    std::string digest(std::uint32_t id) const { return m_digests.text(id); }
    // The ids of a digest / bizNo text (0 when no call has it).
    std::uint32_t digestId(std::string_view text) const { return m_digests.find(text); }
    std::uint32_t bizNoId(std::string_view text) const { return m_bizNos.find(text); }
    // The digest id an event carries (0 none).
    std::uint32_t eventDigest(std::uint32_t call, const CallEvent& e) const;
    // Every digest id seen for a call.
    std::vector<std::uint32_t> digestsOf(std::uint32_t call) const;
    std::size_t digestCount(std::uint32_t call) const;
    // More than one call has this digest / bizNo as its own.
    bool digestShared(std::uint32_t d) const { return m_digestShared.count(d) != 0; }
    bool bizNoShared(std::uint32_t b) const { return m_bizNoShared.count(b) != 0; }
    // How many calls have this digest / bizNo as their own, in O(1).
    std::size_t callsWithDigestCount(std::uint32_t d) const { return ownerCount(true, d); }
    std::size_t callsWithBizNoCount(std::uint32_t b) const { return ownerCount(false, b); }
    // Calls whose own digest / bizNo is this one.
    std::vector<std::uint32_t> callsWithDigest(std::uint32_t digestId) const;
    std::vector<std::uint32_t> callsWithBizNo(std::uint32_t bizNoId) const;

    EpochMillis timeOf(const CallState& c, std::int32_t dt) const {
        return dt == kNoDt ? kNoTime : c.base() + dt;
    }
    EpochMillis expireAt(const CallState& c) const {
        return c.expireSec == kNoDt ? kNoTime : c.base() + std::int64_t(c.expireSec) * 1000;
    }
    EpochMillis lastEventAt(std::uint32_t i) const;

    // The other calls that carried one of this call's traceIds (rare: a
    // callId replaced in transit, or made again within one trace).
    std::vector<const TraceLink*> traceLinksOf(std::uint32_t call) const;

    const StoreCounters& counters() const { return m_counters; }
    // Heap bytes held, for the memory benchmark.
    std::size_t memoryBytes() const;

    // Keeps only the calls `keep` says yes to, rebuilding the interners and
    // indexes; returns the old index -> new index map (npos when dropped).
    std::vector<std::uint32_t> compact(const std::function<bool(std::uint32_t)>& keep);

    void reserve(std::size_t calls);

    // While a window loads (issue 12): a call that leaves may be frozen
    // (packed, without the indexes of the store) until key_rotation_window
    // has passed it; a later call of its callId, digest or bizNo brings it
    // back as it was, so key rotations are found across the whole window
    // while memory holds only the calls still open. While a window loads, a
    // compaction keeps the id tables sized for as many calls as before it,
    // since the store fills up again at once. `live`: they are sized for the
    // calls kept (else a store that once held every call of the window would
    // keep the room for them: 50 B a call at 1M), and a record row read
    // again unchanged (the feed looks back clock_skew every 30 s) leaves its
    // packed call packed.
    void startFreezing(bool live = false);
    // Live: how far back of its latest row the record feed reads rows again
    // (clock_skew and its overlap): see Tomb.
    void setRereadSpan(std::int64_t ms) { m_rereadSpanMs = ms; }
    // A lookup asks for a call's rows again on purpose (a drill-down of a
    // call gone): they are not taken for the feed's re-reads.
    void unbury(std::string_view callId);
    void stopFreezing();
    bool freezing() const { return m_frozen != nullptr; }
    // Packs the call; it leaves the store at the next compact (the caller's
    // keep says no). False when it cannot: the call stays.
    // `firstAt`: its first event (firstEventAt), by which it is forgotten.
    bool freeze(std::uint32_t call, EpochMillis firstAt);
    // Brings back the frozen calls that share a digest or bizNo with a call
    // that took it since the last time (and theirs in turn): called before
    // calls are judged (apply() does), so that each key-rotation group is
    // whole; looked up together, their lookups overlap.
    void thawSiblings();
    // Forgets frozen calls that began before `t` (the window has passed them).
    void dropFrozenBefore(EpochMillis t);
    // Forgets the oldest frozen calls until at most `calls` are frozen and
    // they take at most `bytes`; returns how many went.
    std::size_t dropFrozenOldest(std::size_t calls, std::size_t bytes);
    std::size_t frozenCount() const;
    std::size_t frozenBytes() const; // (of memoryBytes)
    // Every frozen call's callId, state and events, oldest first (its ids of
    // instances are the store's; its digest, bizNo and event handle are not).
    using FrozenVisitor =
        std::function<void(std::string_view callId, const CallState&, std::span<const CallEvent>)>;
    void forEachFrozen(const FrozenVisitor& each, std::size_t limit = SIZE_MAX) const;
    // Told of each call as it freezes (+1), and as it thaws or is forgotten
    // (-1), from now on (FrozenCalls::observe); not when freezing stops.
    void observeFrozen(
        std::function<void(const CallState&, std::span<const CallEvent>, int sign)> observer);
    // Brings back the frozen call of this callId, and those of this bizNo
    // (a search asks for either) unless not `bizNoToo`; returns the callId's
    // call, or npos.
    std::uint32_t thawNamed(std::string_view callIdOrBizNo, bool bizNoToo = true);
    // Another call shares one of its traceIds (such calls are not frozen:
    // the trace index does not follow them).
    bool hasTraceLinks(std::uint32_t call) const { return m_linksOf.count(call) != 0; }

private:
    // `callIdHash`: its callId's hash, when a prefetch told it already.
    std::uint32_t addOne(const RecordObservation& o, const std::uint64_t* callIdHash = nullptr);
    std::uint32_t addOne(const AttemptObservation& o, const std::uint64_t* callIdHash = nullptr);
    std::uint32_t addOne(const ReceiptObservation& o, const std::uint64_t* callIdHash = nullptr);
    std::uint32_t addOne(const CallerObservation& o, const std::uint64_t* callIdHash = nullptr);
    template <typename Observation, typename Each>
    void addAll(const ObservationList<Observation>& list, Each each);
    template <typename Each> void addEach(const ObservationBatch& b, Each each);
    // A call took a digest or bizNo as its own: its frozen siblings come
    // back before anything is judged (thawSiblings).
    void lookFrozen(std::uint32_t call) {
        if (m_frozen && (m_callsToLook.empty() || m_callsToLook.back() != call))
            m_callsToLook.push_back(call); // (once for its digest and bizNo taken together)
    }
    void thawPending() {
        if (!m_thawQueue.empty())
            thawQueued();
    }
    void thawQueued();
    // A frozen call back into the store; returns its index.
    std::uint32_t thaw(std::uint64_t at);
    std::uint32_t callFor(std::string_view callId, EpochMillis t,
                          const std::uint64_t* knownHash = nullptr);
    std::uint8_t digestSlot(std::uint32_t call, std::string_view digest);
    void setOwnDigest(std::uint32_t call, std::uint32_t digestId);
    void setBizNo(std::uint32_t call, std::uint32_t bizNoId);
    static std::int32_t toDt(const CallState& c, EpochMillis t);
    bool packedRecordUnchanged(const RecordObservation& o); // (live freezing)
    // Live: a call that left whole memory (packed, or gone) while its record
    // row or its attempts may still be read again (within the feed's
    // look-back of the latest row of each) leaves their state here, so that
    // reading them again does not make the call anew, its other events
    // missing (a receipt_missing that is not). Keyed by the callId's hash:
    // another callId is mistaken for it only with the very same record times,
    // status and lock_version, or an attempt no later than its latest whose
    // bit it has.
    struct Tomb {
        EpochMillis created = kNoTime, updated = kNoTime;
        AttemptPrint attempts;
        std::uint16_t lock = 0;
        std::uint8_t status = 0;
    };
    void bury(std::string_view callId, const Tomb& t);
    void buryForgotten(); // the packed calls forgotten since
    // Its record row or attempts may still be read again.
    bool stillReadAgain(const Tomb& t) const;
    bool buriedRowUnchanged(const RecordObservation& o) const;
    // Live: an attempt of a call packed (the very same attempt, finished as
    // it was) or gone (by its tomb) read again.
    bool attemptReadAgain(const AttemptObservation& o);
    Tomb tombOf(const CallState& c, std::span<const CallEvent> events) const {
        return {timeOf(c, c.created), timeOf(c, c.updated), attemptPrintOf(c, events),
                c.lockVersion, c.record};
    }
    // The row as it was, or an older state read late (as addOne tells them).
    static bool readAgain(const Tomb& t, const RecordObservation& o);
    void append(std::uint32_t call, const CallEvent& e);
    // A call's events, all at once (it has none yet): their copies, for the
    // caller to amend.
    std::span<CallEvent> setEvents(std::uint32_t call, std::span<const CallEvent> events);
    // Fetches the first and last of a call's events (a hint: nothing is read).
    void prefetchEvents(const CallState& c) const {
        if (c.eventCount) {
            const CallEvent* e = m_pool.at(c.eventsAt);
            __builtin_prefetch(e);
            __builtin_prefetch(e + c.eventCount - 1);
        }
    }
    std::span<CallEvent> mutableEvents(std::uint32_t i) {
        CallState& c = m_calls[i];
        if (c.eventCount == 0)
            return {};
        return {m_pool.at(c.eventsAt), c.eventCount};
    }
    std::uint32_t instanceId(std::string_view name);
    void noteTrace(std::string_view traceId, std::uint32_t call);
    void indexLinks();
    std::size_t ownerCount(bool byDigest, std::uint32_t key) const;

    Interner m_callIds; // id = call index + 1
    Interner m_instances;
    struct InstanceHit { // see instanceId
        std::string name;
        std::uint32_t id = 0;
    };
    std::array<InstanceHit, 16> m_instanceHits;
    Interner m_bizNos;
    Interner m_digests{true};
    std::vector<CallState> m_calls;
    EventPool m_pool;
    // Rare: a call's digests beyond its own (digest conflicts).
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_extraDigests;
    // Calls by their own digest / bizNo: one owner inline, more in a side map.
    std::vector<std::uint32_t> m_digestOwner, m_bizNoOwner; // id -> call index + 1
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_digestShared, m_bizNoShared;
    // (key << 32 | call) of keys shared by many calls: joining stays O(1).
    std::unordered_set<std::uint64_t> m_digestMembers, m_bizNoMembers;
    TraceIndex m_traces;
    std::vector<TraceLink> m_traceLinks;
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_linksOf; // call -> links
    StoreCounters m_counters;
    std::unique_ptr<FrozenCalls> m_frozen;
    bool m_liveFreezing = false; // (startFreezing)
    std::unordered_map<std::uint64_t, Tomb> m_tombs;
    EpochMillis m_latestUpdate = kNoTime;  // the latest record row applied (live)
    EpochMillis m_latestAttempt = kNoTime; // the latest attempt's arrival applied (live)
    std::int64_t m_rereadSpanMs = 0;
    std::function<void(const CallState&, std::span<const CallEvent>, int)> m_frozenObserver;
    std::vector<std::uint64_t> m_thawQueue;
    std::vector<std::uint32_t> m_callsToLook; // see lookFrozen
};

} // namespace callscope
