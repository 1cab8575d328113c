#include "models/observations.h"

#include "models/varint.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <type_traits>

namespace callscope {
namespace {

// A short printable head of an oversized value, for the rejection sample.
std::string headOf(const char* field, const std::string& value) {
    std::string out = std::string(field) + " of " + std::to_string(value.size()) + " bytes: ";
    for (const char ch : value.substr(0, 40))
        out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    return out + "...";
}

// Moves the observations whose identity fields exceed `maxBytes` into
// `rejected`; returns how many moved.
template <typename T, typename Fields>
std::size_t sift(ObservationList<T>& items, std::size_t maxBytes, const char* where,
                 std::vector<Rejection>& rejected, Fields fields) {
    std::size_t moved = 0;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const char* bad = nullptr;
        const std::string* value = nullptr;
        fields(items[i], [&](const char* name, const std::string& v) {
            if (!bad && v.size() > maxBytes) {
                bad = name;
                value = &v;
            }
        });
        if (bad) {
            rejected.push_back({"oversized field", where, headOf(bad, *value)});
            items[i] = T{}; // (spent, without its megabyte)
            ++moved;
            continue;
        }
        if (kept != i)
            items[kept] = std::move(items[i]);
        ++kept;
    }
    items.resize(kept);
    return moved;
}

} // namespace

std::size_t rejectOversized(ObservationBatch& b, std::size_t maxBytes) {
    std::size_t n = 0;
    n +=
        sift(b.records, maxBytes, "record", b.rejected, [](const RecordObservation& o, auto check) {
            check("callId", o.callId);
            check("digest", o.digest);
            check("firstSource", o.firstSource);
        });
    n += sift(b.attempts, maxBytes, "attempt", b.rejected,
              [](const AttemptObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("sourceInstance", o.sourceInstance);
                  check("traceId", o.traceId);
              });
    n += sift(b.receipts, maxBytes, "receipt", b.rejected,
              [](const ReceiptObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("sourceInstance", o.sourceInstance);
              });
    n += sift(b.callerEvents, maxBytes, "caller event", b.rejected,
              [](const CallerObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("instance", o.instance);
                  check("bizNo", o.bizNo);
                  check("traceId", o.traceId);
              });
    return n;
}

// --- Reused observations (issue 12) ----------------------------------------

class ObservationPool {
public:
    ObservationPool() { // (put() then never allocates: it runs in destructors)
        m_records.reserve(kLists);
        m_attempts.reserve(kLists);
        m_receipts.reserve(kLists);
        m_callerEvents.reserve(kLists);
    }
    // A batch's observations, spent, whole lists at a time. (Lists beyond
    // kLists are freed after the lock is released, by whoever drops the batch.)
    void put(ObservationBatch& b) {
        auto records = b.records.takeAll();
        auto attempts = b.attempts.takeAll();
        auto receipts = b.receipts.takeAll();
        auto callerEvents = b.callerEvents.takeAll();
        std::lock_guard lock(m_mutex);
        keep(m_records, records);
        keep(m_attempts, attempts);
        keep(m_receipts, receipts);
        keep(m_callerEvents, callerEvents);
    }
    template <typename T> std::vector<T> take() {
        std::lock_guard lock(m_mutex);
        auto& lists = listsOf<T>();
        std::vector<T> out;
        if (!lists.empty()) {
            out = std::move(lists.back());
            lists.pop_back();
        }
        return out;
    }
    std::size_t spentCount() const {
        std::lock_guard lock(m_mutex);
        std::size_t n = 0;
        const auto count = [&](const auto& lists) {
            for (const auto& l : lists)
                n += l.size();
        };
        count(m_records);
        count(m_attempts);
        count(m_receipts);
        count(m_callerEvents);
        return n;
    }

private:
    // At most this many lists of each type (a batch's worth each): a reader
    // fills one batch at a time, and the one it dropped comes back here;
    // more would only hold memory (2 cost 7 B/call at peak).
    static constexpr std::size_t kLists = 1;
    template <typename T> void keep(std::vector<std::vector<T>>& lists, std::vector<T>& list) {
        if (!list.empty() && lists.size() < kLists)
            lists.push_back(std::move(list));
    }
    template <typename T> std::vector<std::vector<T>>& listsOf() {
        if constexpr (std::is_same_v<T, RecordObservation>)
            return m_records;
        else if constexpr (std::is_same_v<T, AttemptObservation>)
            return m_attempts;
        else if constexpr (std::is_same_v<T, ReceiptObservation>)
            return m_receipts;
        else
            return m_callerEvents;
    }
    mutable std::mutex m_mutex;
    std::vector<std::vector<RecordObservation>> m_records;
    std::vector<std::vector<AttemptObservation>> m_attempts;
    std::vector<std::vector<ReceiptObservation>> m_receipts;
    std::vector<std::vector<CallerObservation>> m_callerEvents;
};

std::shared_ptr<ObservationPool> makeObservationPool() {
    return std::make_shared<ObservationPool>();
}

std::size_t spentObservations(const ObservationPool& pool) {
    return pool.spentCount();
}

namespace {
// Emptied, its buffer kept unless an oversized value left it large.
void empty(std::string& s) {
    if (s.capacity() > 4096)
        std::string().swap(s);
    else
        s.clear();
}
} // namespace

// (The sizes below are there to say that a field added needs resetting.)
void resetObservation(RecordObservation& o) {
    static_assert(sizeof(RecordObservation) == 136, "a field was added: reset it here");
    empty(o.callId);
    empty(o.digest);
    o.status = RecordStatus::Processing;
    empty(o.firstSource);
    o.lockVersion = 0;
    o.createdAt = o.updatedAt = o.expireAt = kNoTime;
}
void resetObservation(AttemptObservation& o) {
    static_assert(sizeof(AttemptObservation) == 160, "a field was added: reset it here");
    o.id = 0;
    empty(o.callId);
    empty(o.digest);
    empty(o.sourceInstance);
    empty(o.traceId);
    o.outcome = AttemptOutcome::Executed;
    o.arrivedAt = o.finishedAt = kNoTime;
}
void resetObservation(ReceiptObservation& o) {
    static_assert(sizeof(ReceiptObservation) == 176, "a field was added: reset it here");
    empty(o.callId);
    o.status = RecordStatus::Processing;
    empty(o.resultRef);
    o.finishedAt = kNoTime;
    o.version = 0;
    empty(o.sourceInstance);
    empty(o.digest);
    o.origin = MessageOrigin{};
}
void resetObservation(CallerObservation& o) {
    static_assert(sizeof(CallerObservation) == 208, "a field was added: reset it here");
    empty(o.callId);
    o.state = CallerState::Initiated;
    o.at = kNoTime;
    empty(o.instance);
    o.attempt = 0;
    empty(o.bizNo);
    empty(o.digest);
    empty(o.traceId);
    o.origin = MessageOrigin{};
}

namespace {

// The next observation of `list`: a spent one of its own, else (when it has
// none at all: a batch just delivered) a list the pool keeps, else a new one.
// (The pool is asked once per delivery, not once per message.)
template <typename T> T& addTo(ObservationList<T>& list, ObservationPool* pool) {
    if (pool && list.empty() && list.spent() == 0)
        list.adopt(pool->take<T>());
    return list.emplace_back();
}

} // namespace

ObservationBatch::ObservationBatch(std::shared_ptr<ObservationPool> pool)
    : m_pool(std::move(pool)) {}

ObservationBatch::~ObservationBatch() {
    if (m_pool)
        m_pool->put(*this);
}

ObservationBatch::ObservationBatch(ObservationBatch&& o) noexcept
    : rejected(std::move(o.rejected)), gaps(std::move(o.gaps)), records(std::move(o.records)),
      attempts(std::move(o.attempts)), receipts(std::move(o.receipts)),
      callerEvents(std::move(o.callerEvents)), probes(std::move(o.probes)),
      readFrom(std::exchange(o.readFrom, kNoTime)),
      kafkaReadTo(std::exchange(o.kafkaReadTo, kNoTime)), stream(std::exchange(o.stream, 0)),
      m_pool(o.m_pool) {}

ObservationBatch& ObservationBatch::operator=(ObservationBatch&& o) noexcept {
    if (this == &o)
        return *this;
    if (m_pool)
        m_pool->put(*this); // (what it held, spent, before it takes `o`'s)
    rejected = std::move(o.rejected);
    gaps = std::move(o.gaps);
    records = std::move(o.records);
    attempts = std::move(o.attempts);
    receipts = std::move(o.receipts);
    callerEvents = std::move(o.callerEvents);
    probes = std::move(o.probes);
    readFrom = std::exchange(o.readFrom, kNoTime);
    kafkaReadTo = std::exchange(o.kafkaReadTo, kNoTime);
    stream = std::exchange(o.stream, 0);
    m_pool = o.m_pool;
    // (`o` is left empty, std::vector's move leaves it so.)
    return *this;
}

void ObservationBatch::clear() {
    readFrom = kafkaReadTo = kNoTime;
    stream = 0;
    records.clear();
    attempts.clear();
    receipts.clear();
    callerEvents.clear();
    rejected.clear();
    gaps.clear();
    probes.clear();
}

RecordObservation& ObservationBatch::addRecord() {
    return addTo(records, m_pool.get());
}
AttemptObservation& ObservationBatch::addAttempt() {
    return addTo(attempts, m_pool.get());
}
ReceiptObservation& ObservationBatch::addReceipt() {
    return addTo(receipts, m_pool.get());
}
CallerObservation& ObservationBatch::addCallerEvent() {
    return addTo(callerEvents, m_pool.get());
}
void ObservationBatch::dropLastReceipt() {
    if (!receipts.empty())
        receipts.pop_back();
}
void ObservationBatch::dropLastCallerEvent() {
    if (!callerEvents.empty())
        callerEvents.pop_back();
}

// --- Packed batches (issue 12) ---------------------------------------------

namespace {

// Every field of an observation, in packing order. (Bound by structured
// bindings: a field added to an observation fails to compile here until it
// is packed too.)
template <typename O, typename F> void eachField(O& o, F&& f) {
    using T = std::remove_const_t<O>;
    const auto origin = [&](auto& m) {
        auto& [partition, offset, kafkaTimestamp] = m;
        f(partition), f(offset), f(kafkaTimestamp);
    };
    if constexpr (std::is_same_v<T, RecordObservation>) {
        auto& [callId, digest, status, firstSource, lockVersion, createdAt, updatedAt, expireAt] =
            o;
        f(callId), f(digest), f(status), f(firstSource), f(lockVersion), f(createdAt);
        f(updatedAt), f(expireAt);
    } else if constexpr (std::is_same_v<T, AttemptObservation>) {
        auto& [id, callId, digest, sourceInstance, traceId, outcome, arrivedAt, finishedAt] = o;
        f(id), f(callId), f(digest), f(sourceInstance), f(traceId), f(outcome), f(arrivedAt);
        f(finishedAt);
    } else if constexpr (std::is_same_v<T, ReceiptObservation>) {
        auto& [callId, status, resultRef, finishedAt, version, sourceInstance, digest, from] = o;
        f(callId), f(status), f(resultRef), f(finishedAt), f(version), f(sourceInstance);
        f(digest), origin(from);
    } else {
        static_assert(std::is_same_v<T, CallerObservation>);
        auto& [callId, state, at, instance, attempt, bizNo, digest, traceId, from] = o;
        f(callId), f(state), f(at), f(instance), f(attempt), f(bizNo), f(digest), f(traceId);
        origin(from);
    }
}

// A text (a varint length, then its bytes), else a fixed field (its bytes).
template <typename V> constexpr bool kIsText = std::is_same_v<std::remove_cvref_t<V>, std::string>;

// The most bytes an observation packs into.
template <typename T> std::size_t packedBound(const T& o) {
    std::size_t n = 0;
    eachField(o, [&](const auto& v) {
        if constexpr (kIsText<decltype(v)>)
            n += kMaxVarintBytes + v.size();
        else
            n += sizeof v;
    });
    return n;
}

char* packOne(char* p, const auto& o) {
    eachField(o, [&](const auto& v) {
        if constexpr (kIsText<decltype(v)>) {
            p = putVarint(p, v.size());
            std::memcpy(p, v.data(), v.size());
            p += v.size();
        } else {
            std::memcpy(p, &v, sizeof v);
            p += sizeof v;
        }
    });
    return p;
}

const char* unpackOne(const char* p, auto& o) {
    eachField(o, [&](auto& v) {
        if constexpr (kIsText<decltype(v)>) {
            std::uint64_t n = 0;
            p = getVarint(p, n);
            v.assign(p, n);
            p += n;
        } else {
            std::memcpy(&v, p, sizeof v);
            p += sizeof v;
        }
    });
    return p;
}

// Room for `n` more bytes in `to`'s buffer (grown by half again at least).
char* roomFor(PackedBatch& to, std::size_t n) {
    if (to.capacity - to.used < n) {
        const std::size_t capacity = std::max(to.used + n, to.capacity + to.capacity / 2);
        auto bytes = std::make_unique_for_overwrite<char[]>(capacity);
        if (to.used)
            std::memcpy(bytes.get(), to.bytes.get(), to.used);
        to.bytes = std::move(bytes);
        to.capacity = capacity;
    }
    return to.bytes.get() + to.used;
}

template <typename T> std::uint32_t packList(const ObservationList<T>& list, PackedBatch& to) {
    for (const T& o : list) {
        char* p = roomFor(to, packedBound(o));
        to.used = static_cast<std::size_t>(packOne(p, o) - to.bytes.get());
    }
    return static_cast<std::uint32_t>(list.size());
}

} // namespace

void pack(ObservationBatch& from, PackedBatch& to) {
    to.used = 0;
    // A first guess at the size, so that a new buffer is seldom grown.
    const std::size_t guess = from.records.size() * 100 + from.attempts.size() * 130 +
                              from.receipts.size() * 170 + from.callerEvents.size() * 190;
    if (to.capacity < guess) {
        to.bytes = std::make_unique_for_overwrite<char[]>(guess);
        to.capacity = guess;
    }
    to.records = packList(from.records, to);
    to.attempts = packList(from.attempts, to);
    to.receipts = packList(from.receipts, to);
    to.callerEvents = packList(from.callerEvents, to);
    to.readFrom = from.readFrom;
    to.kafkaReadTo = from.kafkaReadTo;
    to.stream = from.stream;
    to.rejected = std::move(from.rejected);
    to.gaps = std::move(from.gaps);
    to.probes = std::move(from.probes);
    from.clear();
}

void unpack(PackedBatch& from, ObservationBatch& to) {
    to.clear();
    const char* p = from.bytes.get();
    for (std::uint32_t k = 0; k < from.records; ++k)
        p = unpackOne(p, to.addRecord());
    for (std::uint32_t k = 0; k < from.attempts; ++k)
        p = unpackOne(p, to.addAttempt());
    for (std::uint32_t k = 0; k < from.receipts; ++k)
        p = unpackOne(p, to.addReceipt());
    for (std::uint32_t k = 0; k < from.callerEvents; ++k)
        p = unpackOne(p, to.addCallerEvent());
    to.readFrom = from.readFrom;
    to.kafkaReadTo = from.kafkaReadTo;
    to.stream = from.stream;
    to.rejected = std::move(from.rejected);
    to.gaps = std::move(from.gaps);
    to.probes = std::move(from.probes);
    from.rejected.clear();
    from.gaps.clear();
    from.probes.clear();
}

} // namespace callscope
