#pragma once
// The per-callId store of SPEC §2: every observation becomes an event on one
// callId's timeline. Compact by design: interned callIds, instances, digests
// and bizNos, 16-byte events with times relative to the call's first event,
// enum states. Bounded by retention (see compact()).
#include "models/interner.h"
#include "models/observations.h"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace callscope {

enum class EventType : std::uint8_t { Record, Attempt, Receipt, Caller };

inline constexpr std::int32_t kNoDt = INT32_MIN;

struct CallEvent {
    std::int32_t dt;         // ms since the call's base time
    EventType type;
    std::uint8_t code;       // RecordStatus / AttemptOutcome / receipt RecordStatus / CallerState
    std::uint8_t digestSlot; // 0 none, 1 the call's digest, 2.. its extra digests
    std::uint8_t flags;      // see EventFlag
    std::uint32_t instance;  // record: first_source; attempt/caller: source; receipt: server
    std::int32_t aux;        // record: lock_version; attempt: finished dt (kNoDt = open);
                             // receipt: version; caller: attempt number
};
static_assert(sizeof(CallEvent) == 16);

enum EventFlag : std::uint8_t {
    DuplicateReceipt = 1,  // same version and status delivered again
    OutOfOrderReceipt = 2, // a lower version after a higher one
};

enum CallFlag : std::uint8_t {
    HasRecord = 1,
    RecordRecreated = 2, // a later created_at than the one seen before
    Anomalous = 4,       // held by an anomaly: not evicted
};

struct CallState {
    EpochMillis base = 0;        // time of the call's first event
    std::uint32_t digest = 0;    // the call's own digest (the record's, else the first seen)
    std::uint32_t bizNo = 0;
    std::uint32_t firstSource = 0;
    std::int32_t created = kNoDt; // record created_at, dt
    std::int32_t updated = kNoDt; // record updated_at, dt
    std::int32_t previousCreated = kNoDt; // created_at of an earlier incarnation
    std::int32_t expireSec = kNoDt;       // record expire_at, seconds since base
    std::int32_t lastDt = 0;              // latest event, for retention
    std::uint16_t lockVersion = 0;
    std::uint8_t record = 0; // 0 none, else 1 + RecordStatus
    std::uint8_t caller = 0; // 0 none, else 1 + CallerState (latest by arrival)
    std::uint8_t flags = 0;
    std::vector<CallEvent> events; // in arrival order

    bool hasRecord() const { return flags & HasRecord; }
    RecordStatus recordStatus() const { return static_cast<RecordStatus>(record - 1); }
};

struct StoreCounters {
    std::int64_t records = 0, attempts = 0, receipts = 0, callerEvents = 0;
    std::int64_t duplicateReceipts = 0, outOfOrderReceipts = 0, unchangedRows = 0;
};

class CallStore {
public:
    CallStore();

    // Applies a batch; returns the indices of the calls it touched (unique).
    std::vector<std::uint32_t> apply(const ObservationBatch& batch);
    // The same for one observation each (tests, benchmarks).
    std::uint32_t add(const RecordObservation& o);
    std::uint32_t add(const AttemptObservation& o);
    std::uint32_t add(const ReceiptObservation& o);
    std::uint32_t add(const CallerObservation& o);

    static constexpr std::uint32_t npos = UINT32_MAX;
    std::uint32_t find(std::string_view callId) const;
    std::size_t size() const { return m_calls.size(); }
    const CallState& call(std::uint32_t i) const { return m_calls[i]; }
    void markAnomalous(std::uint32_t i, bool on);

    std::string callId(std::uint32_t i) const { return m_callIds.text(i + 1); }
    std::string instance(std::uint32_t id) const { return m_instances.text(id); }
    std::string bizNo(std::uint32_t id) const { return m_bizNos.text(id); }
    std::string digest(std::uint32_t id) const { return m_digests.text(id); }
    // The digest id an event carries (0 none).
    std::uint32_t eventDigest(std::uint32_t call, const CallEvent& e) const;
    // Every digest id seen for a call.
    std::vector<std::uint32_t> digestsOf(std::uint32_t call) const;
    // Calls whose own digest / bizNo is this one.
    const std::vector<std::uint32_t>& callsWithDigest(std::uint32_t digestId) const;
    const std::vector<std::uint32_t>& callsWithBizNo(std::uint32_t bizNoId) const;

    EpochMillis timeOf(const CallState& c, std::int32_t dt) const {
        return dt == kNoDt ? kNoTime : c.base + dt;
    }
    EpochMillis expireAt(const CallState& c) const {
        return c.expireSec == kNoDt ? kNoTime : c.base + std::int64_t(c.expireSec) * 1000;
    }
    EpochMillis lastEventAt(const CallState& c) const { return c.base + c.lastDt; }

    const StoreCounters& counters() const { return m_counters; }
    // Heap bytes held, for the memory benchmark.
    std::size_t memoryBytes() const;

    // Keeps only the calls `keep` says yes to, rebuilding the interners and
    // indexes; returns the old index -> new index map (npos when dropped).
    std::vector<std::uint32_t> compact(const std::function<bool(std::uint32_t)>& keep);

    void reserve(std::size_t calls);

private:
    std::uint32_t callFor(std::string_view callId, EpochMillis t);
    std::uint8_t digestSlot(std::uint32_t call, std::string_view digest);
    void setOwnDigest(std::uint32_t call, std::uint32_t digestId);
    void setBizNo(std::uint32_t call, std::uint32_t bizNoId);
    static std::int32_t toDt(const CallState& c, EpochMillis t);
    void touch(CallState& c, std::int32_t dt) {
        if (dt != kNoDt && dt > c.lastDt)
            c.lastDt = dt;
    }

    Interner m_callIds; // id = call index + 1
    Interner m_instances;
    Interner m_bizNos;
    Interner m_digests{true};
    std::vector<CallState> m_calls;
    // Rare: a call's digests beyond its own (digest conflicts).
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_extraDigests;
    // Calls by their own digest / bizNo: one owner inline, more in a side map.
    std::vector<std::uint32_t> m_digestOwner, m_bizNoOwner; // id -> call index + 1
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_digestShared, m_bizNoShared;
    mutable std::vector<std::uint32_t> m_scratch;
    StoreCounters m_counters;
};

} // namespace callscope
