#include "models/call_store.h"

#include "models/frozen_calls.h"

#include <algorithm>
#include <bit>

namespace callscope {

CallStore::CallStore() = default;
CallStore::~CallStore() = default;
CallStore::CallStore(CallStore&&) noexcept = default;
CallStore& CallStore::operator=(CallStore&&) noexcept = default;

void CallStore::reserve(std::size_t calls) {
    m_calls.reserve(calls);
    m_callIds.reserve(calls);
    m_digests.reserve(calls);
    m_bizNos.reserve(calls);
    m_digestOwner.reserve(calls + 1);
    m_bizNoOwner.reserve(calls + 1);
}

std::int32_t CallStore::toDt(const CallState& c, EpochMillis t) {
    if (t == kNoTime)
        return kNoDt;
    const EpochMillis d = t - c.base();
    return static_cast<std::int32_t>(std::clamp<EpochMillis>(d, INT32_MIN + 1, INT32_MAX));
}

std::uint32_t CallStore::find(std::string_view callId) const {
    const std::uint32_t id = m_callIds.find(callId);
    return id == 0 ? npos : id - 1;
}

std::vector<std::uint32_t> CallStore::findByBizNo(std::string_view bizNo) const {
    const std::uint32_t b = m_bizNos.find(bizNo);
    if (b == 0)
        return {};
    return callsWithBizNo(b);
}

std::uint32_t CallStore::callFor(std::string_view callId, EpochMillis t,
                                 const std::uint64_t* knownHash) {
    std::uint64_t hash = 0; // (a callId is kept as it is: the frozen index hashes it alike)
    const std::uint32_t id = knownHash ? m_callIds.internHashed(callId, hash = *knownHash)
                                       : m_callIds.intern(callId, hash);
    if (id > m_calls.size() && m_frozen && m_frozen->size() > 0) {
        // It left while the window loads, and something of it came after all.
        std::vector<std::uint64_t> found;
        m_frozen->find(FrozenCalls::Key::CallId, m_callIds.storedForm(id), hash, found);
        if (!found.empty())
            return thaw(found.front());
    }
    if (id > m_calls.size()) {
        CallState c;
        const EpochMillis first = t == kNoTime ? nowMillis() : t;
        c.baseSec =
            static_cast<std::uint32_t>(std::clamp<EpochMillis>(first / 1000, 0, UINT32_MAX));
        m_calls.push_back(std::move(c));
    }
    return id - 1;
}

namespace {

// Calls by a key (digest or bizNo id): the first owner inline, all owners in
// a side map once a second call shares the key. A call joins a key once (it
// may come back after its bizNo changed twice): a short list is searched, a
// long one (a placeholder "N/A" shared by 100k calls) asks `members`, so
// adding stays O(1) however many share the key.
constexpr std::size_t kSearchedOwners = 16;

void addOwner(std::vector<std::uint32_t>& owners,
              std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>& shared,
              std::unordered_set<std::uint64_t>& members, std::uint32_t key, std::uint32_t call) {
    if (owners.size() <= key)
        owners.resize(key + 1, 0);
    std::uint32_t& owner = owners[key];
    if (owner == 0) {
        owner = call + 1;
        return;
    }
    if (owner == call + 1)
        return;
    auto& all = shared[key];
    if (all.empty())
        all.push_back(owner - 1);
    const auto member = [key](std::uint32_t c) { return std::uint64_t{key} << 32 | c; };
    if (all.size() <= kSearchedOwners) {
        if (std::find(all.begin(), all.end(), call) != all.end())
            return;
        all.push_back(call);
        if (all.size() > kSearchedOwners)
            for (const std::uint32_t c : all)
                members.insert(member(c));
        return;
    }
    if (members.insert(member(call)).second)
        all.push_back(call);
}

} // namespace

void CallStore::setOwnDigest(std::uint32_t call, std::uint32_t d) {
    m_calls[call].digest = d;
    addOwner(m_digestOwner, m_digestShared, m_digestMembers, d, call);
}

void CallStore::setBizNo(std::uint32_t call, std::uint32_t b) {
    CallState& c = m_calls[call];
    if (b == 0 || c.bizNo == b)
        return;
    c.bizNo = b;
    addOwner(m_bizNoOwner, m_bizNoShared, m_bizNoMembers, b, call);
}

std::uint8_t CallStore::digestSlot(std::uint32_t call, std::string_view digest) {
    if (digest.empty())
        return 0;
    CallState& c = m_calls[call];
    if (c.digest != 0 && m_digests.equals(c.digest, digest))
        return 1; // the common case: no hash lookup
    const std::uint32_t d = m_digests.intern(digest);
    if (c.digest == 0) {
        setOwnDigest(call, d);
        lookFrozen(call);
    }
    if (c.digest == d)
        return 1;
    auto& extra = m_extraDigests[call];
    for (std::size_t k = 0; k < extra.size(); ++k)
        if (extra[k] == d)
            return static_cast<std::uint8_t>(k + 2);
    if (extra.size() >= 30)
        return 0; // absurd: keep the call's events, drop the digest
    extra.push_back(d);
    return static_cast<std::uint8_t>(extra.size() + 1);
}

std::uint32_t CallStore::eventDigest(std::uint32_t call, const CallEvent& e) const {
    if (e.digestSlot == 0)
        return 0;
    if (e.digestSlot == 1)
        return m_calls[call].digest;
    const auto it = m_extraDigests.find(call);
    if (it == m_extraDigests.end() || e.digestSlot - 2u >= it->second.size())
        return 0;
    return it->second[e.digestSlot - 2];
}

std::size_t CallStore::digestCount(std::uint32_t call) const {
    std::size_t n = m_calls[call].digest ? 1 : 0;
    if (const auto it = m_extraDigests.find(call); it != m_extraDigests.end())
        n += it->second.size();
    return n;
}

std::vector<std::uint32_t> CallStore::digestsOf(std::uint32_t call) const {
    std::vector<std::uint32_t> out;
    if (m_calls[call].digest)
        out.push_back(m_calls[call].digest);
    if (const auto it = m_extraDigests.find(call); it != m_extraDigests.end())
        out.insert(out.end(), it->second.begin(), it->second.end());
    return out;
}

namespace {

std::vector<std::uint32_t>
ownersOf(const std::vector<std::uint32_t>& owners,
         const std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>& shared,
         std::uint32_t key) {
    if (const auto it = shared.find(key); it != shared.end())
        return it->second;
    if (key < owners.size() && owners[key])
        return {owners[key] - 1};
    return {};
}

} // namespace

std::size_t CallStore::ownerCount(bool byDigest, std::uint32_t key) const {
    const auto& owners = byDigest ? m_digestOwner : m_bizNoOwner;
    const auto& shared = byDigest ? m_digestShared : m_bizNoShared;
    std::size_t n = key < owners.size() && owners[key] ? 1 : 0;
    if (const auto it = shared.find(key); it != shared.end())
        n = it->second.size();
    // Many more frozen: a placeholder (see FrozenCalls::find).
    if (n > 0 && m_frozen &&
        m_frozen->crowded(byDigest ? FrozenCalls::Key::Digest : FrozenCalls::Key::BizNo,
                          byDigest ? m_digests.storedForm(key) : m_bizNos.storedForm(key)))
        n += FrozenCalls::kMaxGroup + 1;
    return n;
}

std::vector<std::uint32_t> CallStore::callsWithDigest(std::uint32_t d) const {
    return ownersOf(m_digestOwner, m_digestShared, d);
}

std::vector<std::uint32_t> CallStore::callsWithBizNo(std::uint32_t b) const {
    return ownersOf(m_bizNoOwner, m_bizNoShared, b);
}

std::uint32_t EventPool::allocate(std::uint8_t k) {
    if (!m_free[k].empty()) {
        const std::uint32_t h = m_free[k].back();
        m_free[k].pop_back();
        return h;
    }
    const std::uint32_t size = 1u << k;
    if (m_used + size > (1u << kChunkBits)) {
        // Hand the rest of the full chunk to the free lists, then open another.
        if (!m_chunks.empty()) {
            std::uint32_t at = m_used;
            for (int c = kChunkBits; c >= 0; --c)
                while ((1u << kChunkBits) - at >= (1u << c)) {
                    m_free[c].push_back(
                        static_cast<std::uint32_t>((m_chunks.size() - 1) << kChunkBits) + at);
                    at += 1u << c;
                }
        }
        m_chunks.push_back(std::make_unique<CallEvent[]>(1u << kChunkBits));
        m_used = 0;
    }
    const std::uint32_t h =
        static_cast<std::uint32_t>((m_chunks.size() - 1) << kChunkBits) + m_used;
    m_used += size;
    return h;
}

void EventPool::release(std::uint32_t handle, std::uint8_t k) {
    m_free[k].push_back(handle);
}

std::size_t EventPool::memoryBytes() const {
    std::size_t n = m_chunks.size() * (sizeof(CallEvent) << kChunkBits);
    for (const auto& f : m_free)
        n += f.capacity() * 4;
    return n;
}

void CallStore::append(std::uint32_t call, const CallEvent& e) {
    CallState& c = m_calls[call];
    if (c.eventCount == UINT16_MAX) {
        m_counters.droppedEvents++;
        return;
    }
    const std::uint32_t capacity = c.eventClass == EventPool::kNone ? 0 : 1u << c.eventClass;
    if (c.eventCount == capacity) {
        const std::uint8_t k = c.eventClass == EventPool::kNone ? 0 : c.eventClass + 1;
        const std::uint32_t h = m_pool.allocate(k);
        if (c.eventCount)
            std::copy_n(m_pool.at(c.eventsAt), c.eventCount, m_pool.at(h));
        if (c.eventClass != EventPool::kNone)
            m_pool.release(c.eventsAt, c.eventClass);
        c.eventsAt = h;
        c.eventClass = k;
    }
    m_pool.at(c.eventsAt)[c.eventCount++] = e;
}

std::span<CallEvent> CallStore::setEvents(std::uint32_t call, std::span<const CallEvent> events) {
    CallState& c = m_calls[call];
    std::size_t count = events.size();
    if (count > UINT16_MAX) { // (cannot be: a store keeps at most as many)
        m_counters.droppedEvents += static_cast<std::int64_t>(count - UINT16_MAX);
        count = UINT16_MAX;
    }
    c.eventCount = static_cast<std::uint16_t>(count);
    c.eventClass = EventPool::kNone;
    if (count == 0)
        return {};
    // The smallest class that holds them: one allocation, where appending
    // them one by one took a block of each size on the way (1, 2, 4, 8, …).
    const auto k = static_cast<std::uint8_t>(std::bit_width(count - 1));
    c.eventsAt = m_pool.allocate(k);
    c.eventClass = k;
    CallEvent* to = m_pool.at(c.eventsAt);
    std::copy_n(events.begin(), count, to);
    return {to, count};
}

std::uint32_t CallStore::instanceId(std::string_view name) {
    // A few names, one on nearly every event: most are settled by comparing
    // with the last one that fell in the same of 16 places, without hashing.
    if (name.empty())
        return 0;
    InstanceHit& hit =
        m_instanceHits[(name.size() * 31 + static_cast<unsigned char>(name.back())) & 15];
    if (hit.id != 0 && hit.name == name)
        return hit.id;
    hit.id = std::min(m_instances.intern(name), kMaxInstanceId);
    hit.name.assign(name);
    return hit.id;
}

EpochMillis CallStore::lastEventAt(std::uint32_t i) const {
    const CallState& c = m_calls[i];
    std::int32_t last = 0;
    for (const CallEvent& e : events(i)) {
        last = std::max(last, e.dt);
        if (e.type == EventType::Attempt && e.aux != kNoDt)
            last = std::max(last, e.aux);
    }
    return c.base() + last;
}

std::uint32_t CallStore::add(const RecordObservation& o) {
    const std::uint32_t i = addOne(o);
    thawPending();
    return i;
}

bool CallStore::readAgain(const Tomb& t, const RecordObservation& o) {
    const auto status = static_cast<std::uint8_t>(1 + static_cast<int>(o.status));
    const auto lock = static_cast<std::uint16_t>(std::clamp(o.lockVersion, 0, 65535));
    return (t.created == o.createdAt && t.updated == o.updatedAt && t.status == status &&
            t.lock == lock) ||
           (o.updatedAt != kNoTime && o.updatedAt < t.updated && o.createdAt == t.created);
}

namespace {

// The packed call of this callId, read (its texts and events valid until the
// next read); false when none, or more than one, is packed.
bool packedCall(FrozenCalls* frozen, std::string_view callId, FrozenCalls::Entry& out) {
    std::vector<std::uint64_t> found;
    if (!frozen || frozen->size() == 0 || !frozen->find(FrozenCalls::Key::CallId, callId, found) ||
        found.size() != 1)
        return false;
    out = frozen->read(found.front());
    return true;
}

} // namespace

bool CallStore::packedRecordUnchanged(const RecordObservation& o) {
    FrozenCalls::Entry e;
    return packedCall(m_frozen.get(), o.callId, e) && e.state.hasRecord() &&
           readAgain(tombOf(e.state, e.events), o);
}

std::uint64_t AttemptPrint::bitOf(EpochMillis arrived, std::uint32_t instance, std::uint8_t code) {
    std::uint64_t h = static_cast<std::uint64_t>(arrived) * 0x9e3779b97f4a7c15ULL;
    h ^= (std::uint64_t{instance} << 3 | code) * 0xc2b2ae3d27d4eb4fULL;
    h ^= h >> 29;
    return std::uint64_t{1} << ((h * 0xbf58476d1ce4e5b9ULL) >> 58);
}

AttemptPrint attemptPrintOf(const CallState& c, std::span<const CallEvent> events) {
    AttemptPrint p;
    for (const CallEvent& e : events)
        if (e.type == EventType::Attempt && e.dt != kNoDt) {
            const EpochMillis at = c.base() + e.dt;
            p.last = std::max(p.last, at);
            p.bits |= AttemptPrint::bitOf(at, e.instance, static_cast<std::uint8_t>(e.code));
        }
    return p;
}

bool CallStore::stillReadAgain(const Tomb& t) const {
    const auto within = [&](EpochMillis at, EpochMillis latest) {
        return at != kNoTime && latest != kNoTime && at >= latest - m_rereadSpanMs;
    };
    return (t.status != 0 && within(t.updated, m_latestUpdate)) ||
           within(t.attempts.last, m_latestAttempt);
}

void CallStore::bury(std::string_view callId, const Tomb& t) {
    if (stillReadAgain(t))
        m_tombs[hashText(callId)] = t;
}

void CallStore::unbury(std::string_view callId) {
    if (!m_tombs.empty())
        m_tombs.erase(hashText(callId));
}

void CallStore::buryForgotten() {
    if (m_frozen && m_liveFreezing)
        for (const FrozenCalls::Forgotten& f : m_frozen->takeForgotten()) {
            Tomb t = tombOf(f.state, {});
            t.attempts = f.attempts;
            bury(f.callId, t);
        }
}

bool CallStore::buriedRowUnchanged(const RecordObservation& o) const {
    const auto it = m_tombs.find(hashText(o.callId));
    return it != m_tombs.end() && readAgain(it->second, o);
}

std::uint32_t CallStore::addOne(const RecordObservation& o, const std::uint64_t* callIdHash) {
    // Live, the record feed reads the last clock_skew again every 30 s: a
    // packed call's row as it was stays out (else it would come back, and be
    // packed again, each time), and so does that of a call gone (Tomb).
    if (m_liveFreezing) {
        m_latestUpdate = std::max(m_latestUpdate, o.updatedAt);
        if (((m_frozen && m_frozen->size() > 0) || !m_tombs.empty()) &&
            m_callIds.find(o.callId) == 0 &&
            (buriedRowUnchanged(o) ||
             (m_frozen && m_frozen->size() > 0 && packedRecordUnchanged(o)))) {
            m_counters.unchangedRows++;
            return npos;
        }
    }
    const std::uint32_t i =
        callFor(o.callId, o.createdAt != kNoTime ? o.createdAt : o.updatedAt, callIdHash);
    CallState& c = m_calls[i];
    const std::int32_t created = toDt(c, o.createdAt), updated = toDt(c, o.updatedAt);
    const auto status = static_cast<std::uint8_t>(1 + static_cast<int>(o.status));
    const auto lock = static_cast<std::uint16_t>(std::clamp(o.lockVersion, 0, 65535));
    if (c.hasRecord()) {
        if (c.created == created && c.updated == updated && c.record == status &&
            c.lockVersion == lock) {
            m_counters.unchangedRows++; // re-read in the overlap window
            return i;
        }
        if (created != kNoDt && c.created != kNoDt && created > c.created) {
            c.flags |= RecordRecreated; // the record was purged and made again
        } else if (updated != kNoDt && c.updated != kNoDt && updated < c.updated &&
                   created == c.created) {
            m_counters.unchangedRows++; // an older state read late: nothing new
            return i;
        }
    }
    const std::uint8_t slot = digestSlot(i, o.digest);
    CallState& cs = m_calls[i];
    cs.created = created;
    cs.updated = updated;
    cs.expireSec = o.expireAt == kNoTime
                       ? kNoDt
                       : static_cast<std::int32_t>(std::clamp<EpochMillis>(
                             (o.expireAt - cs.base()) / 1000, INT32_MIN + 1, INT32_MAX));
    cs.lockVersion = lock;
    cs.record = status;
    cs.flags |= HasRecord;
    cs.firstSource = instanceId(o.firstSource);
    m_counters.records++; // a change of the record, not a row read again
    append(i, makeEvent(updated, EventType::Record, static_cast<std::uint8_t>(o.status), slot, 0,
                        cs.firstSource, lock));
    return i;
}

void CallStore::noteTrace(std::string_view traceId, std::uint32_t call) {
    const std::uint32_t first = m_traces.note(traceId, call);
    if (first == TraceIndex::kNone)
        return;
    if (const auto it = m_linksOf.find(call); it != m_linksOf.end())
        for (const std::uint32_t k : it->second)
            if (m_traceLinks[k].first == first && m_traceLinks[k].traceId == traceId)
                return;
    if (!m_traces.addCarrier(traceId)) {
        // Too many calls carry it: a placeholder, whose links mean nothing.
        std::erase_if(m_traceLinks, [&](const TraceLink& l) { return l.traceId == traceId; });
        indexLinks();
        return;
    }
    m_linksOf[first].push_back(static_cast<std::uint32_t>(m_traceLinks.size()));
    m_linksOf[call].push_back(static_cast<std::uint32_t>(m_traceLinks.size()));
    m_traceLinks.push_back(TraceLink{std::string(traceId), first, call});
}

void CallStore::indexLinks() {
    m_linksOf.clear();
    for (std::uint32_t k = 0; k < m_traceLinks.size(); ++k) {
        m_linksOf[m_traceLinks[k].first].push_back(k);
        m_linksOf[m_traceLinks[k].other].push_back(k);
    }
}

std::vector<const TraceLink*> CallStore::traceLinksOf(std::uint32_t call) const {
    std::vector<const TraceLink*> out;
    if (const auto it = m_linksOf.find(call); it != m_linksOf.end())
        for (const std::uint32_t k : it->second)
            out.push_back(&m_traceLinks[k]);
    return out;
}

std::uint32_t CallStore::add(const AttemptObservation& o) {
    const std::uint32_t i = addOne(o);
    thawPending();
    return i;
}

bool CallStore::attemptReadAgain(const AttemptObservation& o) {
    if (o.arrivedAt == kNoTime)
        return false;
    const bool packed = m_frozen && m_frozen->size() > 0;
    if ((!packed && m_tombs.empty()) || m_callIds.find(o.callId) != 0)
        return false;
    const std::uint32_t inst = instanceId(o.sourceInstance);
    const auto code = static_cast<std::uint8_t>(o.outcome);
    // Packed: the very same attempt, unless it has finished since (then the
    // call comes back for it, as for any change).
    if (FrozenCalls::Entry e; packedCall(m_frozen.get(), o.callId, e)) {
        for (const CallEvent& ev : e.events)
            if (ev.type == EventType::Attempt && ev.dt != kNoDt &&
                timeOf(e.state, ev.dt) == o.arrivedAt && ev.instance == inst && ev.code == code)
                return !(ev.aux == kNoDt && o.finishedAt != kNoTime);
        return false;
    }
    // Gone: by its tomb. (An attempt that finished since is let go with it.)
    const auto it = m_tombs.find(hashText(o.callId));
    if (it == m_tombs.end())
        return false;
    const AttemptPrint& p = it->second.attempts;
    return p.last != kNoTime && o.arrivedAt <= p.last &&
           (p.bits & AttemptPrint::bitOf(o.arrivedAt, inst, code)) != 0;
}

std::uint32_t CallStore::addOne(const AttemptObservation& o, const std::uint64_t* callIdHash) {
    // Live, the attempt log is read again with the records (see the record's
    // addOne): an attempt of a call packed or gone read again is left out.
    // (It made the call anew, the record's row then joined it, not its tomb:
    // a receipt_missing storm in bench/soak.)
    if (m_liveFreezing) {
        if (o.arrivedAt != kNoTime)
            m_latestAttempt = std::max(m_latestAttempt, o.arrivedAt);
        if (attemptReadAgain(o)) {
            m_counters.unchangedRows++;
            return npos;
        }
    }
    const std::uint32_t i = callFor(o.callId, o.arrivedAt, callIdHash);
    noteTrace(o.traceId, i);
    const std::uint8_t slot = digestSlot(i, o.digest);
    const std::uint32_t inst = instanceId(o.sourceInstance);
    CallState& c = m_calls[i];
    const std::int32_t arrived = toDt(c, o.arrivedAt), finished = toDt(c, o.finishedAt);
    const auto code = static_cast<std::uint8_t>(o.outcome);
    const auto ev = mutableEvents(i);
    for (auto it = ev.rbegin(); it != ev.rend(); ++it) {
        if (it->type == EventType::Attempt && it->dt == arrived && it->instance == inst &&
            it->code == code && it->digestSlot == slot) {
            if (it->aux == kNoDt && finished != kNoDt)
                it->aux = finished; // the attempt finished since we read it
            else
                m_counters.unchangedRows++;
            return i;
        }
    }
    m_counters.attempts++;
    append(i, makeEvent(arrived, EventType::Attempt, code, slot, 0, inst, finished));
    return i;
}

std::uint32_t CallStore::add(const ReceiptObservation& o) {
    const std::uint32_t i = addOne(o);
    thawPending();
    return i;
}

std::uint32_t CallStore::addOne(const ReceiptObservation& o, const std::uint64_t* callIdHash) {
    const EpochMillis t =
        o.origin.kafkaTimestamp != kNoTime ? o.origin.kafkaTimestamp : o.finishedAt;
    const std::uint32_t i = callFor(o.callId, t, callIdHash);
    const std::uint8_t slot = digestSlot(i, o.digest);
    const std::uint32_t inst = instanceId(o.sourceInstance);
    CallState& c = m_calls[i];
    const auto version =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(o.version, INT32_MIN, INT32_MAX));
    const auto code = static_cast<std::uint8_t>(o.status);
    std::uint8_t flags = 0;
    std::int32_t highest = INT32_MIN;
    const std::int32_t at = toDt(c, t);
    for (const CallEvent& e : events(i)) {
        if (e.type != EventType::Receipt)
            continue;
        // The same message read again (a window re-read, a cold lookup of a
        // call in memory): same broker timestamp, status, version and
        // sender. A redelivery by the relay has a timestamp of its own.
        if (e.dt == at && e.aux == version && e.code == code && e.instance == inst &&
            e.digestSlot == slot) {
            m_counters.unchangedRows++;
            return i;
        }
        if (e.aux == version && e.code == code)
            flags |= DuplicateReceipt;
        highest = std::max(highest, e.aux);
    }
    if (version < highest && !(flags & DuplicateReceipt))
        flags |= OutOfOrderReceipt;
    m_counters.receipts++;
    m_counters.duplicateReceipts += (flags & DuplicateReceipt) != 0;
    m_counters.outOfOrderReceipts += (flags & OutOfOrderReceipt) != 0;
    append(i, makeEvent(at, EventType::Receipt, code, slot, flags, inst, version));
    return i;
}

std::uint32_t CallStore::add(const CallerObservation& o) {
    const std::uint32_t i = addOne(o);
    thawPending();
    return i;
}

std::uint32_t CallStore::addOne(const CallerObservation& o, const std::uint64_t* callIdHash) {
    const std::uint32_t i = callFor(o.callId, o.at, callIdHash);
    noteTrace(o.traceId, i);
    const std::uint8_t slot = digestSlot(i, o.digest);
    const std::uint32_t inst = instanceId(o.instance);
    if (!o.bizNo.empty() && !m_bizNos.equals(m_calls[i].bizNo, o.bizNo)) {
        // The call stays an owner of its former bizNo too: its frozen
        // siblings are looked up now (rare), as thawSiblings sees the new one.
        if (const std::uint32_t before = m_calls[i].bizNo; before && m_frozen)
            m_frozen->find(FrozenCalls::Key::BizNo, m_bizNos.storedForm(before), m_thawQueue);
        const std::uint32_t b = m_bizNos.intern(o.bizNo);
        setBizNo(i, b);
        lookFrozen(i);
    }
    CallState& c = m_calls[i];
    const std::int32_t at = toDt(c, o.at);
    const auto code = static_cast<std::uint8_t>(o.state);
    for (const CallEvent& e : events(i))
        if (e.type == EventType::Caller && e.dt == at && e.code == code && e.instance == inst &&
            e.aux == o.attempt) {
            m_counters.unchangedRows++; // delivered twice
            return i;
        }
    m_counters.callerEvents++;
    append(i, makeEvent(at, EventType::Caller, code, slot, 0, inst, o.attempt));
    m_calls[i].caller = static_cast<std::uint8_t>(1 + code);
    return i;
}

std::uint32_t CallStore::add(const ProbeObservation& o) {
    const std::uint32_t i = find(o.callId);
    if (i == npos)
        return npos;
    CallState& c = m_calls[i];
    c.flags |= EffectProbed;
    if (!o.failed)
        c.flags =
            static_cast<std::uint8_t>(o.found ? c.flags & ~EffectMissing : c.flags | EffectMissing);
    return i;
}

// Every observation of a batch into the store, in apply()'s order; `each` is
// told the call each one went to.
template <typename Observation, typename Each>
void CallStore::addAll(const ObservationList<Observation>& list, Each each) {
    // With millions of calls every step of adding an observation is a cache
    // miss, each waiting for the one before: the callId's slot, its text,
    // the call, the call's digest (where it is, then its text) and its
    // events. They are fetched in stages for the observations ahead while
    // this one is added: texts 16 ahead, the callId's slot 8 ahead, the call
    // it most likely names (and its text's place) 4 ahead, that text, the
    // digest's place and the events 2 ahead, the digest's text 1 ahead. The
    // callId's hash is kept for its turn. A callId the store surely does not
    // have (a call's first observation, or one of a call that left) has its
    // slot among the frozen calls fetched, and its digest's slot.
    // (A guess only steers what is fetched: adding looks everything up again.)
    constexpr std::size_t kAhead = 8;
    const bool frozen = m_frozen && m_frozen->size() > 0;
    const std::size_t n = list.size();
    std::uint64_t hashes[kAhead];
    std::uint32_t guesses[kAhead] = {}; // call index + 1, 0 none
    for (std::size_t k = 0; k < kAhead && k < n; ++k)
        hashes[k] = m_callIds.prefetch(list[k].callId);
    const auto guessed = [&](std::size_t at) -> const CallState* {
        const std::uint32_t g = guesses[at % kAhead];
        return g != 0 && g <= m_calls.size() ? &m_calls[g - 1] : nullptr;
    };
    for (std::size_t k = 0; k < n; ++k) {
        if (k + 2 * kAhead < n) {
            __builtin_prefetch(list[k + 2 * kAhead].callId.data());
            __builtin_prefetch(list[k + 2 * kAhead].digest.data());
            if constexpr (requires { list[k].traceId; })
                __builtin_prefetch(list[k + 2 * kAhead].traceId.data());
        }
        if (k + 4 < n) {
            const std::size_t at = (k + 4) % kAhead;
            guesses[at] = m_callIds.prefetchKept(hashes[at]);
            if (guesses[at] != 0 && guesses[at] <= m_calls.size()) {
                __builtin_prefetch(&m_calls[guesses[at] - 1]);
            } else {
                guesses[at] = 0;
                if (frozen)
                    m_frozen->prefetch(FrozenCalls::Key::CallId, hashes[at]);
                m_digests.prefetch(list[k + 4].digest);
            }
        }
        if (k + 2 < n)
            if (const CallState* c = guessed(k + 2)) {
                m_callIds.prefetchText(guesses[(k + 2) % kAhead]);
                m_digests.prefetchWhere(c->digest);
                prefetchEvents(*c);
            }
        if (k + 1 < n)
            if (const CallState* c = guessed(k + 1))
                m_digests.prefetchText(c->digest);
        const std::uint64_t hash = hashes[k % kAhead];
        if (k + kAhead < n) {
            hashes[k % kAhead] = m_callIds.prefetch(list[k + kAhead].callId);
            if constexpr (requires { list[k].traceId; })
                prefetchTrace(list[k + kAhead].traceId);
        }
        const std::uint32_t i = addOne(list[k], &hash);
        thawPending();
        if (i != npos) // (a packed call's row read again, unchanged: it stays packed)
            each(i);
    }
}

template <typename Each> void CallStore::addEach(const ObservationBatch& b, Each each) {
    addAll(b.records, each);
    addAll(b.attempts, each);
    addAll(b.receipts, each);
    addAll(b.callerEvents, each);
    for (const auto& o : b.probes)
        if (const std::uint32_t i = add(o); i != npos)
            each(i);
}

void CallStore::applyOnly(const ObservationBatch& b) {
    addEach(b, [](std::uint32_t) {});
}

std::vector<std::uint32_t> CallStore::apply(const ObservationBatch& b) {
    std::vector<std::uint32_t> touched;
    touched.reserve(b.size());
    addEach(b, [&](std::uint32_t i) {
        if (touched.empty() || touched.back() != i) // (a call's events often come together)
            touched.push_back(i);
    });
    thawSiblings(); // judged next: their groups whole
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    return touched;
}

void CallStore::startFreezing(bool live) {
    m_liveFreezing = live;
    if (!m_frozen) {
        m_frozen = std::make_unique<FrozenCalls>();
        if (m_frozenObserver)
            observeFrozen(m_frozenObserver);
    }
    m_frozen->keepForgotten(live);
}

void CallStore::stopFreezing() {
    m_frozen.reset();
    m_liveFreezing = false;
    m_thawQueue.clear();
    m_callsToLook.clear();
}

std::size_t CallStore::frozenCount() const {
    return m_frozen ? m_frozen->size() : 0;
}

std::size_t CallStore::frozenBytes() const {
    return m_frozen ? m_frozen->memoryBytes() : 0;
}

void CallStore::dropFrozenBefore(EpochMillis t) {
    if (m_frozen)
        m_frozen->dropBefore(t);
    buryForgotten();
}

std::size_t CallStore::dropFrozenOldest(std::size_t calls, std::size_t bytes) {
    const std::size_t n = m_frozen ? m_frozen->dropOldest(calls, bytes) : 0;
    buryForgotten();
    return n;
}

void CallStore::forEachFrozen(const FrozenVisitor& each, std::size_t limit) const {
    if (m_frozen)
        m_frozen->forEach([&](const FrozenCalls::Entry& e) { each(e.callId, e.state, e.events); },
                          limit);
}

void CallStore::observeFrozen(
    std::function<void(const CallState&, std::span<const CallEvent>, int sign)> observer) {
    m_frozenObserver = std::move(observer);
    if (!m_frozen)
        return;
    if (!m_frozenObserver) {
        m_frozen->observe({});
        return;
    }
    m_frozen->observe([f = m_frozenObserver](const FrozenCalls::Entry& e, int sign) {
        f(e.state, e.events, sign);
    });
}

std::uint32_t CallStore::thawNamed(std::string_view text, bool bizNoToo) {
    if (!m_frozen || m_frozen->size() == 0)
        return find(text);
    std::vector<std::uint64_t> found;
    m_frozen->find(FrozenCalls::Key::CallId, text, found);
    if (bizNoToo)
        m_frozen->find(FrozenCalls::Key::BizNo, text, found);
    m_thawQueue.insert(m_thawQueue.end(), found.begin(), found.end());
    thawQueued();
    thawSiblings(); // (their key-rotation groups whole, as for any thawed call)
    return find(text);
}

bool CallStore::freeze(std::uint32_t i, EpochMillis firstAt) {
    if (!m_frozen)
        return false;
    const CallState& c = m_calls[i];
    FrozenCalls::Entry e;
    e.callId = m_callIds.storedForm(i + 1);
    e.digest = m_digests.storedForm(c.digest);
    e.bizNo = m_bizNos.storedForm(c.bizNo);
    if (const auto it = m_extraDigests.find(i); it != m_extraDigests.end())
        for (const std::uint32_t d : it->second)
            e.extraDigests.push_back(m_digests.storedForm(d));
    e.state = c;
    e.state.flags |= Reported;
    e.events = events(i);
    return m_frozen->add(e, firstAt);
}

void CallStore::thawSiblings() {
    constexpr std::size_t kAhead = 8;
    const auto digestOf = [&](std::uint32_t call) {
        return m_digests.storedForm(m_calls[call].digest);
    };
    const auto bizNoOf = [&](std::uint32_t call) {
        return m_bizNos.storedForm(m_calls[call].bizNo);
    };
    // The hashes of the keys looked up ahead, kept for their turn (0: none).
    std::uint64_t digestHashes[kAhead] = {}, bizNoHashes[kAhead] = {};
    std::size_t nextAhead = 0;
    // (A thawed call adds itself to the list: its own siblings come too.)
    for (std::size_t k = 0; m_frozen && k < m_callsToLook.size(); ++k) {
        // Up to kAhead - 1 ahead: the ring holds k .. k + kAhead - 1.
        for (; nextAhead < m_callsToLook.size() && nextAhead < k + kAhead; ++nextAhead) {
            const std::uint32_t next = m_callsToLook[nextAhead];
            std::uint64_t& dh = digestHashes[nextAhead % kAhead];
            std::uint64_t& bh = bizNoHashes[nextAhead % kAhead];
            dh = m_calls[next].digest ? hashText(digestOf(next)) : 0;
            bh = m_calls[next].bizNo ? hashText(bizNoOf(next)) : 0;
            if (dh)
                m_frozen->prefetch(FrozenCalls::Key::Digest, dh);
            if (bh)
                m_frozen->prefetch(FrozenCalls::Key::BizNo, bh);
        }
        const std::uint32_t call = m_callsToLook[k];
        if (m_calls[call].digest) {
            const std::uint64_t h = digestHashes[k % kAhead];
            m_frozen->find(FrozenCalls::Key::Digest, digestOf(call),
                           h ? h : hashText(digestOf(call)), m_thawQueue);
        }
        if (m_calls[call].bizNo) {
            const std::uint64_t h = bizNoHashes[k % kAhead];
            m_frozen->find(FrozenCalls::Key::BizNo, bizNoOf(call), h ? h : hashText(bizNoOf(call)),
                           m_thawQueue);
        }
        thawPending();
    }
    m_callsToLook.clear();
}

void CallStore::thawQueued() {
    // A thawed call looks for its own siblings in turn: the queue runs dry
    // when the group is whole.
    while (!m_thawQueue.empty()) {
        const std::uint64_t at = m_thawQueue.back();
        m_thawQueue.pop_back();
        thaw(at);
    }
}

std::uint32_t CallStore::thaw(std::uint64_t at) {
    const std::string_view callId = m_frozen->callIdOf(at);
    if (callId.empty())
        return npos;
    const std::uint32_t id = m_callIds.internStored(callId);
    if (id <= m_calls.size())
        return id - 1; // thawed already (queued twice), or made again meanwhile
    const FrozenCalls::Entry e = m_frozen->read(at); // (decoded only now)
    m_frozen->remove(at);                            // (its bytes stay until its block goes)
    const std::uint32_t i = id - 1;
    CallState c = e.state;
    c.digest = 0;
    c.bizNo = 0;
    m_calls.push_back(c);
    setEvents(i, e.events); // (its own count and block)
    if (!e.digest.empty()) {
        const std::uint32_t d = m_digests.internStored(e.digest);
        setOwnDigest(i, d);
        lookFrozen(i);
    }
    for (const std::string_view x : e.extraDigests)
        m_extraDigests[i].push_back(m_digests.internStored(x));
    if (!e.bizNo.empty()) {
        const std::uint32_t b = m_bizNos.internStored(e.bizNo);
        setBizNo(i, b);
        lookFrozen(i);
    }
    return i;
}

std::size_t CallStore::memoryBytes() const {
    constexpr std::size_t kMallocOverhead = 16;
    std::size_t n = m_callIds.memoryBytes() + m_instances.memoryBytes() + m_bizNos.memoryBytes() +
                    m_digests.memoryBytes() + m_calls.capacity() * sizeof(CallState) +
                    m_pool.memoryBytes() + (m_digestOwner.capacity() + m_bizNoOwner.capacity()) * 4;
    n += m_tombs.bucket_count() * sizeof(void*) +
         m_tombs.size() * (sizeof(std::uint64_t) + sizeof(Tomb) + sizeof(void*) + kMallocOverhead);
    const auto mapBytes = [&](const auto& m) {
        std::size_t s = m.bucket_count() * sizeof(void*);
        for (const auto& [k, v] : m)
            s += 48 + v.capacity() * 4 + kMallocOverhead;
        return s;
    };
    const auto setBytes = [](const std::unordered_set<std::uint64_t>& s) {
        return s.bucket_count() * sizeof(void*) + s.size() * (8 + sizeof(void*) + kMallocOverhead);
    };
    return n + mapBytes(m_extraDigests) + mapBytes(m_digestShared) + mapBytes(m_bizNoShared) +
           setBytes(m_digestMembers) + setBytes(m_bizNoMembers) + m_traces.memoryBytes() +
           m_traceLinks.capacity() * sizeof(TraceLink) + mapBytes(m_linksOf) +
           (m_frozen ? m_frozen->memoryBytes() : 0);
}

std::vector<std::uint32_t> CallStore::compact(const std::function<bool(std::uint32_t)>& keep) {
    constexpr std::uint32_t kAhead = 8;
    // The kept calls are counted first and the id tables sized for them: they
    // are not rehashed again and again as they fill.
    std::vector<std::uint32_t> keptList;
    for (std::uint32_t i = 0; i < m_calls.size(); ++i)
        if (keep(i))
            keptList.push_back(i);
    const std::size_t keptCount = keptList.size();
    CallStore next;
    // While a window loads, sized for as many calls as now: the store fills
    // up again before the next compaction, and growing the tables rehashes
    // every text each step. Else for the kept calls.
    const std::size_t room =
        m_frozen && !m_liveFreezing ? std::max(keptCount, m_calls.size()) : keptCount;
    next.m_callIds.reserve(room);
    next.m_calls.reserve(room);
    next.m_digests.reserve(room);
    next.m_bizNos.reserve(std::min(room, m_bizNos.size()));
    std::vector<std::uint32_t> map(m_calls.size(), npos);
    std::vector<std::uint32_t> instanceMap(m_instances.size() + 1, UINT32_MAX);
    // Frozen calls name instances by id: while calls freeze, ids stay.
    const bool sameInstances = m_frozen != nullptr;
    if (sameInstances)
        next.m_instances = std::move(m_instances);
    const auto inst = [&](std::uint32_t id) {
        if (id == 0 || sameInstances)
            return id;
        if (instanceMap[id] == UINT32_MAX)
            instanceMap[id] = next.m_instances.intern(m_instances.text(id));
        return instanceMap[id];
    };
    // Each kept call's texts go into the new tables and its events into the
    // new pool: its digest's and bizNo's places, its events and its texts
    // are fetched ahead in stages (see addAll), and the new tables' slots.
    for (std::size_t x = 0; x < keptList.size(); ++x) {
        if (x + 2 * kAhead < keptList.size()) {
            const CallState& a = m_calls[keptList[x + 2 * kAhead]];
            m_digests.prefetchWhere(a.digest);
            m_bizNos.prefetchWhere(a.bizNo);
            prefetchEvents(a);
        }
        if (x + kAhead < keptList.size()) {
            const std::uint32_t ahead = keptList[x + kAhead];
            next.m_callIds.prefetchFrom(m_callIds, ahead + 1);
            m_digests.prefetchText(m_calls[ahead].digest);
            m_bizNos.prefetchText(m_calls[ahead].bizNo);
        }
        if (x + kAhead / 2 < keptList.size()) {
            const CallState& a = m_calls[keptList[x + kAhead / 2]];
            next.m_digests.prefetchFrom(m_digests, a.digest);
            next.m_bizNos.prefetchFrom(m_bizNos, a.bizNo);
        }
        const std::uint32_t i = keptList[x];
        const CallState& old = m_calls[i];
        // The texts are copied as stored (a digest stays packed).
        const std::uint32_t j = next.m_callIds.internFrom(m_callIds, i + 1) - 1;
        next.m_calls.push_back(old);
        map[i] = j;
        CallState& c = next.m_calls[j];
        c.digest = 0;
        c.bizNo = 0;
        c.firstSource = inst(old.firstSource);
        for (CallEvent& e : next.setEvents(j, events(i)))
            if (!sameInstances)
                e.instance = std::min(inst(e.instance), kMaxInstanceId);
        if (old.digest)
            next.setOwnDigest(j, next.m_digests.internFrom(m_digests, old.digest));
        if (const auto it = m_extraDigests.find(i); it != m_extraDigests.end())
            for (const std::uint32_t d : it->second)
                next.m_extraDigests[j].push_back(next.m_digests.internFrom(m_digests, d));
        if (old.bizNo)
            next.setBizNo(j, next.m_bizNos.internFrom(m_bizNos, old.bizNo));
    }
    next.m_counters = m_counters;
    next.m_frozen = std::move(m_frozen);
    next.m_liveFreezing = m_liveFreezing;
    next.m_latestUpdate = m_latestUpdate;
    next.m_latestAttempt = m_latestAttempt;
    next.m_rereadSpanMs = m_rereadSpanMs;
    if (m_liveFreezing) {
        // The calls that leave whole memory (packed, or gone) while their
        // rows may be read again; tombs the feed reads no more go.
        for (std::uint32_t i = 0; i < m_calls.size(); ++i)
            if (map[i] == npos)
                bury(m_callIds.storedForm(i + 1), tombOf(m_calls[i], events(i)));
        std::erase_if(m_tombs, [&](const auto& t) { return !stillReadAgain(t.second); });
    }
    next.m_tombs = std::move(m_tombs);
    next.m_frozenObserver = std::move(m_frozenObserver);
    for (const std::uint32_t call : m_callsToLook)
        if (map[call] != npos)
            next.m_callsToLook.push_back(map[call]);
    next.m_traces = std::move(m_traces);
    next.m_traces.remap(map);
    for (TraceLink& l : m_traceLinks) {
        l.first = map[l.first];
        l.other = map[l.other];
        if (l.first != npos && l.other != npos)
            next.m_traceLinks.push_back(std::move(l));
    }
    next.indexLinks();
    *this = std::move(next);
    return map;
}

} // namespace callscope
