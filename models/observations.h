#pragma once
// What the connectors hand to the model: immutable values, one per row read
// or message decoded, already mapped to canonical words and epoch millis.
#include "models/domain.h"
#include "models/timestamp.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace callscope {

inline constexpr EpochMillis kNoTime = INT64_MIN;

// One observed state of a server idempotency record (SPEC §1.1).
struct RecordObservation {
    std::string callId;
    std::string digest;
    RecordStatus status = RecordStatus::Processing;
    std::string firstSource; // "" when unmapped
    int lockVersion = 0;
    EpochMillis createdAt = kNoTime;
    EpochMillis updatedAt = kNoTime;
    EpochMillis expireAt = kNoTime;
};

// One row of the server attempt log (SPEC §1.2).
struct AttemptObservation {
    std::int64_t id = 0;
    std::string callId;
    std::string digest;
    std::string sourceInstance;
    std::string traceId;
    AttemptOutcome outcome = AttemptOutcome::Executed;
    EpochMillis arrivedAt = kNoTime;
    EpochMillis finishedAt = kNoTime; // kNoTime while unfinished
};

// Where a Kafka message came from.
struct MessageOrigin {
    std::int32_t partition = -1;
    std::int64_t offset = -1;
    EpochMillis kafkaTimestamp = kNoTime;
};

// A business receipt (SPEC §1.3).
struct ReceiptObservation {
    std::string callId;
    RecordStatus status = RecordStatus::Processing;
    std::string resultRef;
    EpochMillis finishedAt = kNoTime;
    std::int64_t version = 0;
    std::string sourceInstance;
    std::string digest;
    MessageOrigin origin;
};

// A caller-view transition (SPEC §1.4).
struct CallerObservation {
    std::string callId;
    CallerState state = CallerState::Initiated;
    EpochMillis at = kNoTime;
    std::string instance;
    int attempt = 0;
    std::string bizNo;
    std::string digest;
    std::string traceId;
    MessageOrigin origin;
};

// What the business-effect probe found for a SUCCESS record (SPEC §5 [probe]).
struct ProbeObservation {
    std::string callId;
    bool found = false;
    bool failed = false; // the query failed: asked, nothing known
};

// A message or row that could not be used: counted per reason, a few kept
// as samples for display, and skipped (SPEC §8).
struct Rejection {
    std::string reason; // "not JSON", "missing callId", ...
    std::string where;  // "receipts.pay/3@1284" or "idempotent_record"
    std::string sample; // the start of the payload, printable
};

// Messages that can no longer be read: deleted by retention (or a topic
// deleted) before callscope reached them. Reported, never skipped silently.
struct DataGap {
    std::string where; // "receipts.pay/3"
    std::int64_t fromOffset = 0;
    std::int64_t toOffset = 0; // exclusive; lost = toOffset - fromOffset
    std::int64_t lost() const { return toOffset - fromOffset; }
};

class ObservationPool;

// An observation as new, its texts emptied but keeping their buffers (up to
// a few KiB: one that once held an oversized value lets it go). A field
// added to an observation must be reset there too.
void resetObservation(RecordObservation& o);
void resetObservation(AttemptObservation& o);
void resetObservation(ReceiptObservation& o);
void resetObservation(CallerObservation& o);

// The observations of one kind in a batch: a vector whose spent elements
// stay constructed past its end (issue 12). emplace_back() hands one of them
// out reset, so a reader refilling a batch writes into elements, texts and
// pages that exist already instead of moving or allocating them; clear()
// and pop_back() only move the end. Copies hold the live elements only.
template <typename T> class ObservationList {
public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    ObservationList() = default;
    ObservationList(const ObservationList& o) : m_items(o.begin(), o.end()), m_size(o.m_size) {}
    ObservationList& operator=(const ObservationList& o) {
        if (this != &o) {
            clear();
            for (const T& x : o)
                push_back(x);
        }
        return *this;
    }
    ObservationList(ObservationList&& o) noexcept
        : m_items(std::move(o.m_items)), m_size(std::exchange(o.m_size, 0)) {
        o.m_items.clear();
    }
    ObservationList& operator=(ObservationList&& o) noexcept {
        if (this != &o) {
            m_items = std::move(o.m_items);
            m_size = std::exchange(o.m_size, 0);
            o.m_items.clear();
        }
        return *this;
    }

    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    T* begin() { return m_items.data(); }
    T* end() { return m_items.data() + m_size; }
    const T* begin() const { return m_items.data(); }
    const T* end() const { return m_items.data() + m_size; }
    T& operator[](std::size_t i) { return m_items[i]; }
    const T& operator[](std::size_t i) const { return m_items[i]; }
    T& at(std::size_t i) { return m_items.at(checked(i)); }
    const T& at(std::size_t i) const { return m_items.at(checked(i)); }
    T& front() { return m_items[0]; }
    const T& front() const { return m_items[0]; }
    T& back() { return m_items[m_size - 1]; }
    const T& back() const { return m_items[m_size - 1]; }

    // A new element, reset: a spent one when there is one.
    T& emplace_back() {
        if (m_size < m_items.size()) {
            resetObservation(m_items[m_size]);
            return m_items[m_size++];
        }
        m_items.emplace_back();
        return m_items[m_size++];
    }
    // Into a spent one's buffers when there is one. (`x` may be one of the
    // list's own: a new element is added as std::vector adds it.)
    void push_back(const T& x) {
        if (m_size < m_items.size())
            m_items[m_size] = x;
        else
            m_items.push_back(x);
        ++m_size;
    }
    void push_back(T&& x) {
        if (m_size < m_items.size())
            m_items[m_size] = std::move(x);
        else
            m_items.push_back(std::move(x));
        ++m_size;
    }
    void pop_back() { --m_size; }
    void clear() { m_size = 0; }
    void resize(std::size_t n) { // to fewer
        if (n < m_size)
            m_size = n;
    }

    // The elements, spent and live, and taking such a vector over (all spent).
    std::size_t spent() const { return m_items.size() - m_size; }
    std::vector<T> takeAll() {
        m_size = 0;
        return std::exchange(m_items, {});
    }
    void adopt(std::vector<T>&& spent) {
        if (m_items.empty()) {
            m_items = std::move(spent);
            m_size = 0;
        }
    }

private:
    std::size_t checked(std::size_t i) const { return i < m_size ? i : m_items.size(); }
    std::vector<T> m_items;
    std::size_t m_size = 0;
};

struct ObservationBatch {
    std::vector<Rejection> rejected;
    std::vector<DataGap> gaps;
    ObservationList<RecordObservation> records;
    ObservationList<AttemptObservation> attempts;
    ObservationList<ReceiptObservation> receipts;
    ObservationList<CallerObservation> callerEvents;
    std::vector<ProbeObservation> probes;
    // While a window loads: the earliest time of what this batch holds, in
    // its reader's terms (a record's updated_at and an attempt's arrival for
    // the record reader, which reads in slices of time; the message time for
    // Kafka's), or kNoTime. The model applies such a batch once Kafka has
    // read that far in every partition (see Monitor::applyQueued).
    EpochMillis readFrom = kNoTime;
    // A window's Kafka reader: how far every partition had been read when
    // the batch was handed over (kNoTime: not told).
    EpochMillis kafkaReadTo = kNoTime;
    // Batches of one stream (a Kafka partition, numbered from 1; 0 for the
    // rest) are applied in the order they came.
    std::uint32_t stream = 0;

    ObservationBatch() = default;
    // A batch whose observations go back to `pool` when it is destroyed, to
    // be filled again by add*() (see ObservationPool).
    explicit ObservationBatch(std::shared_ptr<ObservationPool> pool);
    ~ObservationBatch();
    ObservationBatch(const ObservationBatch&) = default;
    ObservationBatch& operator=(const ObservationBatch&) = default;
    // A batch moved from is empty and keeps its pool, to be filled again
    // from it. (Monitor::deliver does not move: it packs the batch and
    // leaves it empty with its observations, to fill again in place.)
    ObservationBatch(ObservationBatch&& other) noexcept;
    ObservationBatch& operator=(ObservationBatch&& other) noexcept;

    // An observation to fill, appended: a spent one when there is one (the
    // batch's own, else a list the pool keeps: every field reset, its texts
    // keeping their buffers, so that assigning them allocates nothing), else
    // a new one.
    RecordObservation& addRecord();
    AttemptObservation& addAttempt();
    ReceiptObservation& addReceipt();
    CallerObservation& addCallerEvent();
    // Takes back the last one added (it could not be filled).
    void dropLastReceipt();
    void dropLastCallerEvent();
    // Empties the batch; its observations stay, spent, to fill it again.
    void clear();
    bool pooled() const { return m_pool != nullptr; }

    bool empty() const {
        return records.empty() && attempts.empty() && receipts.empty() && callerEvents.empty() &&
               probes.empty();
    }
    std::size_t size() const {
        return records.size() + attempts.size() + receipts.size() + callerEvents.size() +
               probes.size();
    }
    // Worth delivering: observations, rejections or gaps.
    bool hasAnything() const { return !empty() || !rejected.empty() || !gaps.empty(); }

private:
    friend class ObservationPool;
    std::shared_ptr<ObservationPool> m_pool;
};

// Spent observations of one reader's batches (issue 12): a batch dropped
// goes back to its pool, whatever thread drops it, and the reader's next
// batches are filled from it. (The monitor packs what is delivered and leaves
// the batch empty with its observations; a batch made for each page or query
// comes back here when it goes out of scope, and one a sink kept when the
// sink drops it.) Decoding then copies texts into buffers that exist already
// instead of allocating two or three per event. A pool holds at most a few
// batches' worth; thread-safe. (Defined in observations.cpp.)
std::shared_ptr<ObservationPool> makeObservationPool();
// How many spent observations the pool holds (for tests).
std::size_t spentObservations(const ObservationPool& pool);

// A batch's observations packed into one run of bytes (issue 12): what waits
// in the model's queue. Fixed fields as they are, texts after their length:
// about half the memory of the observations (no string headers, no heap
// blocks), one buffer to allocate and free instead of two or three texts an
// observation, and the reader keeps its batch, whose texts keep their
// buffers, to fill again. Rejections, gaps and probes (few) stay as they are.
struct PackedBatch {
    std::unique_ptr<char[]> bytes;
    std::size_t used = 0, capacity = 0;
    std::uint32_t records = 0, attempts = 0, receipts = 0, callerEvents = 0;
    EpochMillis readFrom = kNoTime, kafkaReadTo = kNoTime; // (see ObservationBatch)
    std::uint32_t stream = 0;
    std::vector<Rejection> rejected;
    std::vector<DataGap> gaps;
    std::vector<ProbeObservation> probes;

    std::size_t observations() const {
        return std::size_t{records} + attempts + receipts + callerEvents + probes.size();
    }
};
// Packs `from`'s observations into `to` (its buffer reused when large
// enough, whatever it held before gone) and empties `from`: its spent
// observations stay, to be filled again without allocating.
void pack(ObservationBatch& from, PackedBatch& to);
// Empties `to` and fills it with what `from` holds, in the same order
// (texts assigned into `to`'s spent observations); `from`'s rejections, gaps
// and probes are moved.
void unpack(PackedBatch& from, ObservationBatch& to);

// Identity fields (callId, digest, instances, bizNo, traceId) longer than
// `maxBytes` make an observation a rejection with reason "oversized field"
// (a 300 KB callId would otherwise be stored, printed and reported whole).
// Returns how many observations were rejected.
std::size_t rejectOversized(ObservationBatch& batch, std::size_t maxBytes);

} // namespace callscope
