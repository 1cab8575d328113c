#include "models/frozen_calls.h"

#include "models/varint.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>

#include <zstd.h>

namespace callscope {

namespace {

// An entry: a header, its texts, then the call's state and its events packed
// (see packCall): a healthy call's six to eight events take 4 to 6 bytes each
// instead of 12, its state about 15 instead of 40.
struct Header {
    std::uint8_t extraDigests;
    std::uint8_t unused;
    std::uint16_t callIdLength, digestLength, bizNoLength;
};
static_assert(sizeof(Header) == 8);

// A block holds this much before it is compressed (larger for a call whose
// events alone take more). Smaller blocks compress less well (16 KiB: 2.6
// times, 64 KiB: 2.7, 1 MiB: 2.9 for the benchmark's calls) and larger ones
// take longer to read back.
constexpr std::size_t kBlockBytes = std::size_t{64} << 10;
// zstd's level: 1 compresses the benchmark's calls 2.67 times at 530 MB/s,
// -3 2.54 times at 1.1 GB/s (on this machine's cores); a window load of 5M
// calls freezes most of 650 MB, on the thread that applies everything.
constexpr int kLevel = -3;

// Signed values are zigzagged into varints.
std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// The most a call's state and each of its events take packed: a 32-bit
// varint takes up to 5 bytes (a zigzagged int32 too), a 16-bit one 3.
// State: baseSec, firstSource, created, updated, expireSec (5 each),
// lockVersion (3), record, caller, flags (1 each), the event count (3).
// Event: its byte, a digest slot (under 32: 1), the time after the one
// before (an int32 minus an int32: 34 bits zigzagged, 5), aux (5), instance
// (20 bits, 3).
constexpr std::size_t kMaxPackedState = 5 * 5 + 3 + 3 + 3;
constexpr std::size_t kMaxPackedEvent = 1 + 1 + 5 + 5 + 3;

// A call's state and events, packed. What the store sets again when it
// takes the call back (its digest and bizNo ids, where its events are) is
// not kept. Each event: a byte of its type, code, flags and whether it
// carries the call's own digest; its digest slot when it does not; its time
// after the event before it, its aux and its instance as varints.
char* packCall(char* q, const CallState& c, std::span<const CallEvent> events) {
    static_assert(sizeof(CallState) == 40, "a field was added to CallState: pack it here");
    q = putVarint(q, c.baseSec);
    q = putVarint(q, c.firstSource);
    q = putVarint(q, zigzag(c.created));
    q = putVarint(q, zigzag(c.updated));
    q = putVarint(q, zigzag(c.expireSec));
    q = putVarint(q, c.lockVersion);
    *q++ = static_cast<char>(c.record);
    *q++ = static_cast<char>(c.caller);
    *q++ = static_cast<char>(c.flags);
    q = putVarint(q, events.size());
    std::int64_t before = 0;
    for (const CallEvent& e : events) {
        const bool ownDigest = e.digestSlot == 1;
        *q++ = static_cast<char>(static_cast<unsigned>(e.type) | e.code << 2 | e.flags << 5 |
                                 (ownDigest ? 0x80u : 0u));
        if (!ownDigest)
            q = putVarint(q, e.digestSlot);
        q = putVarint(q, zigzag(std::int64_t{e.dt} - before));
        before = e.dt;
        q = putVarint(q, zigzag(e.aux));
        q = putVarint(q, e.instance);
    }
    return q;
}

const char* unpackCall(const char* q, CallState& c, std::vector<CallEvent>& events) {
    std::uint64_t v = 0;
    c = CallState{};
    q = getVarint(q, v), c.baseSec = static_cast<std::uint32_t>(v);
    q = getVarint(q, v), c.firstSource = static_cast<std::uint32_t>(v);
    q = getVarint(q, v), c.created = static_cast<std::int32_t>(unzigzag(v));
    q = getVarint(q, v), c.updated = static_cast<std::int32_t>(unzigzag(v));
    q = getVarint(q, v), c.expireSec = static_cast<std::int32_t>(unzigzag(v));
    q = getVarint(q, v), c.lockVersion = static_cast<std::uint16_t>(v);
    c.record = static_cast<std::uint8_t>(*q++);
    c.caller = static_cast<std::uint8_t>(*q++);
    c.flags = static_cast<std::uint8_t>(*q++);
    q = getVarint(q, v);
    events.resize(v);
    std::int64_t before = 0;
    for (CallEvent& e : events) {
        const auto b = static_cast<std::uint8_t>(*q++);
        std::uint64_t slot = 1, dt = 0, aux = 0, instance = 0;
        if (!(b & 0x80))
            q = getVarint(q, slot);
        q = getVarint(q, dt);
        q = getVarint(q, aux);
        q = getVarint(q, instance);
        before += unzigzag(dt);
        e = makeEvent(static_cast<std::int32_t>(before), static_cast<EventType>(b & 3),
                      static_cast<std::uint8_t>(b >> 2 & 7), static_cast<std::uint8_t>(slot),
                      static_cast<std::uint8_t>(b >> 5 & 3), static_cast<std::uint32_t>(instance),
                      static_cast<std::int32_t>(unzigzag(aux)));
    }
    c.eventCount = static_cast<std::uint16_t>(events.size());
    return q;
}

// The slot of a hash, from its high half only (as a slot's tag keeps it).
std::size_t slotFor(std::uint64_t hash, std::size_t size) {
    const std::uint64_t high = (hash >> 32 | 1u) << 32;
    return static_cast<std::size_t>((static_cast<unsigned __int128>(high) * size) >> 64);
}

std::uint16_t length16(std::string_view s) {
    return static_cast<std::uint16_t>(std::min<std::size_t>(s.size(), UINT16_MAX));
}

} // namespace

std::uint64_t FrozenCalls::keyHash(Key key, std::uint64_t textHash) {
    const std::uint64_t h =
        textHash + (static_cast<std::uint64_t>(key) + 1) * 0x9e3779b97f4a7c15ULL;
    return h == 0 ? 1 : h;
}

struct FrozenCalls::Codec {
    ZSTD_CCtx* compress = ZSTD_createCCtx();
    ZSTD_DCtx* decompress = ZSTD_createDCtx();
    Codec() {
        if (!compress || !decompress)
            throw std::bad_alloc();
    }
    ~Codec() {
        ZSTD_freeCCtx(compress);
        ZSTD_freeDCtx(decompress);
    }
    Codec(const Codec&) = delete;
    Codec& operator=(const Codec&) = delete;
};

FrozenCalls::FrozenCalls() : m_codec(std::make_unique<Codec>()) {}
FrozenCalls::~FrozenCalls() = default;

const char* FrozenCalls::bytesAt(std::uint64_t position) const {
    const std::uint64_t serial = position >> 32;
    const Block& b = m_blocks[serial - m_firstBlock];
    const std::size_t offset = position & (kTaken - 1);
    if (!b.compressed)
        return b.bytes.get() + offset;
    if (m_cached != serial) {
        m_cache.resize(b.used);
        const std::size_t n =
            ZSTD_decompressDCtx(m_codec->decompress, m_cache.data(), b.used, b.bytes.get(), b.size);
        // (Bytes this process compressed: nothing else could come out.)
        if (ZSTD_isError(n) || n != b.used)
            std::abort();
        m_cached = serial;
    }
    return m_cache.data() + offset;
}

void FrozenCalls::seal(Block& b) {
    const std::size_t held = b.size;
    m_scratch.resize(ZSTD_compressBound(b.used));
    const std::size_t n = ZSTD_compressCCtx(m_codec->compress, m_scratch.data(), m_scratch.size(),
                                            b.bytes.get(), b.used, kLevel);
    std::unique_ptr<char[]> raw = std::move(b.bytes);
    b.compressed = !ZSTD_isError(n) && n < b.used - b.used / 8;
    b.size = b.compressed ? n : b.used;
    b.bytes = std::make_unique_for_overwrite<char[]>(b.size);
    std::memcpy(b.bytes.get(), b.compressed ? m_scratch.data() : raw.get(), b.size);
    b.sealed = true;
    m_bytes = m_bytes - held + b.size;
    if (held == kBlockBytes)
        m_spare = std::move(raw); // the next block's
}

bool FrozenCalls::add(const Entry& e, EpochMillis firstAt) {
    if (m_firstEntry + m_positions.size() >= UINT32_MAX)
        return false;
    Header h{static_cast<std::uint8_t>(std::min<std::size_t>(e.extraDigests.size(), 255)), 0,
             length16(e.callId), length16(e.digest), length16(e.bizNo)};
    std::size_t texts = h.callIdLength + h.digestLength + h.bizNoLength;
    for (std::size_t k = 0; k < h.extraDigests; ++k)
        texts += 2 + length16(e.extraDigests[k]);
    // Room for the most the entry can take; what it does not is used next.
    const std::size_t most = sizeof h + texts + kMaxPackedState + e.events.size() * kMaxPackedEvent;
    // (Every block but the last is sealed: compressed, or as small as its
    // bytes. The last may be too, once those after it have been forgotten.)
    if (m_blocks.empty() || m_blocks.back().sealed ||
        m_blocks.back().used + most > m_blocks.back().size) {
        if (!m_blocks.empty() && !m_blocks.back().sealed)
            seal(m_blocks.back());
        Block b;
        b.size = std::max(most, kBlockBytes);
        b.bytes = b.size == kBlockBytes && m_spare ? std::move(m_spare)
                                                   : std::make_unique_for_overwrite<char[]>(b.size);
        m_bytes += b.size;
        m_blocks.push_back(std::move(b));
    }
    Block& b = m_blocks.back();
    const std::uint64_t at = (m_firstBlock + m_blocks.size() - 1) << 32 | b.used;
    char* const p = b.bytes.get() + b.used;
    std::memcpy(p, &h, sizeof h);
    char* q = p + sizeof h;
    const auto put = [&q](std::string_view s, std::uint16_t n) {
        std::memcpy(q, s.data(), n);
        q += n;
    };
    put(e.callId, h.callIdLength);
    put(e.digest, h.digestLength);
    put(e.bizNo, h.bizNoLength);
    for (std::size_t k = 0; k < h.extraDigests; ++k) {
        const std::uint16_t n = length16(e.extraDigests[k]);
        std::memcpy(q, &n, 2);
        q += 2;
        put(e.extraDigests[k], n);
    }
    q = packCall(q, e.state, e.events.first(std::min<std::size_t>(e.events.size(), UINT16_MAX)));
    assert(static_cast<std::size_t>(q - p) <= most);
    b.used += static_cast<std::size_t>(q - p);
    b.live++;
    b.latestFirst = std::max(b.latestFirst, firstAt);
    ++m_live;
    const auto entry = static_cast<std::uint32_t>(m_firstEntry + m_positions.size());
    m_positions.push_back(at);
    Checks checks{};
    const auto key = [&](Key k, std::string_view text) {
        const std::uint64_t h = keyHash(k, text);
        checks.of[static_cast<int>(k)] = checkOf(h);
        m_added.push_back({h, entry, k});
    };
    key(Key::CallId, e.callId);
    if (!e.digest.empty())
        key(Key::Digest, e.digest);
    if (!e.bizNo.empty())
        key(Key::BizNo, e.bizNo);
    m_checks.push_back(checks);
    if (m_added.size() >= 3 * 1024)
        indexAdded();
    if (m_observer)
        m_observer(e, +1);
    return true;
}

std::uint64_t FrozenCalls::positionOf(std::uint64_t entry) const {
    if (entry < m_firstEntry || entry - m_firstEntry >= m_positions.size())
        return UINT64_MAX;
    const std::uint64_t position = m_positions[entry - m_firstEntry];
    return position & kTaken ? UINT64_MAX : position;
}

std::string_view FrozenCalls::callIdOf(std::uint64_t at) const {
    const std::uint64_t position = positionOf(at);
    return position == UINT64_MAX ? std::string_view{} : keyText(position, Key::CallId);
}

FrozenCalls::Entry FrozenCalls::read(std::uint64_t at) {
    const std::uint64_t position = positionOf(at);
    if (position == UINT64_MAX)
        return {};
    return decode(position, m_read);
}

void FrozenCalls::forEach(const std::function<void(const Entry&)>& each, std::size_t limit) const {
    std::vector<CallEvent> events;
    for (auto it = m_positions.begin(); it != m_positions.end() && limit > 0; ++it)
        if (!(*it & kTaken)) {
            each(decode(*it, events));
            --limit;
        }
}

FrozenCalls::Entry FrozenCalls::decode(std::uint64_t position,
                                       std::vector<CallEvent>& events) const {
    const char* p = bytesAt(position);
    Header h;
    std::memcpy(&h, p, sizeof h);
    Entry e;
    const char* q = p + sizeof h;
    e.callId = {q, h.callIdLength};
    q += h.callIdLength;
    e.digest = {q, h.digestLength};
    q += h.digestLength;
    e.bizNo = {q, h.bizNoLength};
    q += h.bizNoLength;
    for (std::size_t k = 0; k < h.extraDigests; ++k) {
        std::uint16_t n = 0;
        std::memcpy(&n, q, 2);
        e.extraDigests.emplace_back(q + 2, n);
        q += 2 + n;
    }
    unpackCall(q, e.state, events);
    e.events = events;
    return e;
}

std::string_view FrozenCalls::keyText(std::uint64_t position, Key key) const {
    const char* p = bytesAt(position);
    Header h;
    std::memcpy(&h, p, sizeof h);
    const char* q = p + sizeof h;
    if (key == Key::CallId)
        return {q, h.callIdLength};
    q += h.callIdLength;
    if (key == Key::Digest)
        return {q, h.digestLength};
    return {q + h.digestLength, h.bizNoLength};
}

void FrozenCalls::indexAdded() {
    constexpr std::size_t kAhead = 8;
    for (std::size_t k = 0; k < m_added.size(); ++k) {
        // (A rebuild on the way moves the table: a few prefetches miss.)
        if (k + kAhead < m_added.size() && !m_slots.empty())
            __builtin_prefetch(&m_slots[slotFor(m_added[k + kAhead].hash, m_slots.size())]);
        index(m_added[k].key, m_added[k].hash, m_added[k].entry);
    }
    m_added.clear();
}

void FrozenCalls::remove(std::uint64_t at) {
    const std::uint64_t position = positionOf(at);
    if (position == UINT64_MAX)
        return;
    if (m_observer) {
        std::vector<CallEvent> events;
        m_observer(decode(position, events), -1);
    }
    m_positions[at - m_firstEntry] |= kTaken;
    m_blocks[(position >> 32) - m_firstBlock].live--;
    --m_live;
}

void FrozenCalls::index(Key key, std::uint64_t h, std::uint32_t entry) {
    if (key != Key::CallId && m_crowded.count(h))
        return;
    if ((m_filled + 1) * 4 > m_slots.size() * 3)
        rebuild(); // stale slots go, then half full
    const std::uint32_t tag = tagOf(h);
    std::size_t same = 0;
    std::size_t i = slotFor(h, m_slots.size());
    for (; m_slots[i].tag != 0; i = i + 1 == m_slots.size() ? 0 : i + 1)
        same += key != Key::CallId && m_slots[i].tag == tag &&
                positionOf(m_slots[i].entry) != UINT64_MAX && // (a callId's count is not asked)
                checks(m_slots[i].entry, key, h);
    // A digest or bizNo that many calls share (a placeholder) is not indexed
    // further: each lookup of it would walk them all.
    if (key != Key::CallId && same >= kMaxGroup) {
        m_crowded.insert(h);
        return;
    }
    m_slots[i] = {tag, entry};
    ++m_filled;
}

void FrozenCalls::rebuild(bool thawedToo) {
    // An entry forgotten goes; one thawed stays until it is forgotten (rare:
    // reading each entry here would cost a cache miss a slot) unless
    // `thawedToo`, and counts toward the size: the table is at most half
    // full after, so that it fills to three quarters by half as many keys
    // again as it keeps (a linear probe then reads 8.5 slots on average
    // when the key is not there: about a cache line). (Sized by the slots
    // filled before, stale ones included, it doubled at each rebuild, and a
    // shrink left it full enough to be rebuilt again at the next key: over
    // 5M calls it went to 2^24 slots for 2.3M keys, 136 MB.)
    const auto keeps = [&](const Slot& s) {
        return s.tag != 0 && s.entry >= m_firstEntry &&
               (!thawedToo || positionOf(s.entry) != UINT64_MAX);
    };
    std::size_t kept = 0;
    for (const Slot& s : m_slots)
        kept += keeps(s);
    std::vector<Slot> slots(std::max<std::size_t>(1024, 2 * kept));
    std::size_t filled = 0;
    for (const Slot& s : m_slots) {
        if (!keeps(s))
            continue;
        // The slot comes from the hash's high half, which the tag keeps.
        std::size_t i = slotFor(std::uint64_t{s.tag} << 32, slots.size());
        while (slots[i].tag != 0)
            i = i + 1 == slots.size() ? 0 : i + 1;
        slots[i] = s;
        ++filled;
    }
    m_slots.swap(slots);
    m_filled = filled;
}

bool FrozenCalls::find(Key key, std::string_view text, std::uint64_t textHash,
                       std::vector<std::uint64_t>& out) {
    indexAdded();
    if (m_slots.empty())
        return true;
    const std::uint64_t h = keyHash(key, textHash);
    if (key != Key::CallId && !m_crowded.empty() && m_crowded.count(h))
        return false;
    const std::uint32_t tag = tagOf(h);
    for (std::size_t i = slotFor(h, m_slots.size()); m_slots[i].tag != 0;
         i = i + 1 == m_slots.size() ? 0 : i + 1) {
        if (m_slots[i].tag != tag)
            continue;
        const std::uint64_t position = positionOf(m_slots[i].entry);
        if (position != UINT64_MAX && checks(m_slots[i].entry, key, h) &&
            keyText(position, key) == text)
            out.push_back(m_slots[i].entry);
    }
    return true;
}

void FrozenCalls::prefetch(Key key, std::uint64_t textHash) {
    indexAdded();
    if (!m_slots.empty())
        __builtin_prefetch(&m_slots[slotFor(keyHash(key, textHash), m_slots.size())]);
}

void FrozenCalls::dropBefore(EpochMillis t) {
    indexAdded();
    // Blocks go in the order they were filled; one whose calls are not all
    // past keeps the younger ones after it (they are a little younger each).
    while (!m_blocks.empty() && m_blocks.front().latestFirst < t)
        dropFront();
    // Mostly stale (an entry has up to three keys): the table shrinks, the
    // keys of thawed entries going too (else, were they many, this would
    // rebuild it as large at every pass).
    if (m_filled > 1024 && m_filled > 6 * m_live)
        rebuild(true);
}

std::size_t FrozenCalls::dropOldest(std::size_t calls, std::size_t bytes) {
    indexAdded();
    const std::size_t before = m_live;
    while (!m_blocks.empty() && m_live > calls)
        dropFront();
    // By bytes, the index counts as it will be once rebuilt for the entries
    // left (its slots do not shrink while blocks go): twice their keys, as
    // many a live entry as it has now, once stale slots are gone.
    if (memoryBytes() > bytes)
        rebuild(true);
    const double keysPerEntry = m_live > 0 ? double(m_filled) / double(m_live) : 0;
    const std::size_t slotBytes = m_slots.capacity() * sizeof(Slot);
    const auto projected = [&] {
        const auto slots = std::max(1024.0, 2 * keysPerEntry * double(m_live));
        return memoryBytes() - slotBytes + static_cast<std::size_t>(slots) * sizeof(Slot);
    };
    const bool overBytes = projected() > bytes;
    while (!m_blocks.empty() && projected() > bytes)
        dropFront();
    if (overBytes || (m_filled > 1024 && m_filled > 6 * m_live))
        rebuild(true);
    return before - m_live;
}

void FrozenCalls::dropFront() {
    if (m_observer || m_keepForgotten) {
        std::vector<CallEvent> events;
        for (std::size_t k = 0; k < m_positions.size() && (m_positions[k] >> 32) == m_firstBlock;
             ++k)
            if (!(m_positions[k] & kTaken)) {
                const Entry e = decode(m_positions[k], events);
                if (m_observer)
                    m_observer(e, -1);
                if (m_keepForgotten)
                    m_forgotten.push_back(
                        {std::string(e.callId), e.state, attemptPrintOf(e.state, e.events)});
            }
    }
    const Block& b = m_blocks.front();
    m_live -= b.live;
    m_bytes -= b.size;
    m_blocks.pop_front();
    ++m_firstBlock;
    while (!m_positions.empty() && (m_positions.front() >> 32) < m_firstBlock) {
        m_positions.pop_front();
        m_checks.pop_front();
        ++m_firstEntry;
    }
}

void FrozenCalls::clear() {
    if (m_observer)
        forEach([&](const Entry& e) { m_observer(e, -1); });
    m_blocks.clear();
    m_firstBlock = 0;
    m_cached = UINT64_MAX; // (serials start again)
    m_slots = {};
    m_positions.clear();
    m_checks.clear();
    m_firstEntry = 1;
    m_filled = m_live = m_bytes = 0;
    m_crowded.clear();
    m_added.clear();
    m_read = {};
}

std::size_t FrozenCalls::memoryBytes() const {
    return m_bytes + (m_spare ? kBlockBytes : 0) + m_scratch.capacity() + m_cache.capacity() +
           ZSTD_sizeof_CCtx(m_codec->compress) + ZSTD_sizeof_DCtx(m_codec->decompress) +
           m_slots.capacity() * sizeof(Slot) + m_positions.size() * (8 + sizeof(Checks)) +
           m_crowded.size() * 32 + m_added.capacity() * sizeof(Added) +
           m_read.capacity() * sizeof(CallEvent);
}

} // namespace callscope
