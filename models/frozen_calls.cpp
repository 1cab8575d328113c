#include "models/frozen_calls.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace callscope {

namespace {

// An entry: a header, the call's state, its events, then its texts.
struct Header {
    std::uint8_t alive;
    std::uint8_t extraDigests;
    std::uint16_t callIdLength, digestLength, bizNoLength;
};
static_assert(sizeof(Header) == 8);

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
constexpr std::size_t kEventsAt = sizeof(Header) + sizeof(CallState);

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

const char* FrozenCalls::bytesAt(std::uint64_t at) const {
    return m_blocks[(at >> 32) - m_firstBlock].bytes.get() + (at & 0xffffffffu);
}

bool FrozenCalls::alive(std::uint64_t at) const {
    if ((at >> 32) < m_firstBlock)
        return false;
    Header h;
    std::memcpy(&h, bytesAt(at), sizeof h);
    return h.alive != 0;
}

bool FrozenCalls::add(const Entry& e, EpochMillis firstAt) {
    if (m_firstEntry + m_positions.size() >= UINT32_MAX)
        return false;
    Header h{1, static_cast<std::uint8_t>(std::min<std::size_t>(e.extraDigests.size(), 255)),
             length16(e.callId), length16(e.digest), length16(e.bizNo)};
    std::size_t bytes = kEventsAt + e.events.size() * sizeof(CallEvent) + h.callIdLength +
                        h.digestLength + h.bizNoLength;
    for (std::size_t k = 0; k < h.extraDigests; ++k)
        bytes += 2 + length16(e.extraDigests[k]);
    bytes = (bytes + 3) & ~std::size_t{3}; // events stay 4-byte aligned
    if (m_blocks.empty() || m_blocks.back().used + bytes > m_blocks.back().size) {
        Block b;
        b.size = std::max(bytes, kBlockBytes);
        b.bytes = std::make_unique<char[]>(b.size);
        m_bytes += b.size;
        m_blocks.push_back(std::move(b));
    }
    Block& b = m_blocks.back();
    const std::uint64_t at = (m_firstBlock + m_blocks.size() - 1) << 32 | b.used;
    char* p = b.bytes.get() + b.used;
    b.used += bytes;
    b.live++;
    b.latestFirst = std::max(b.latestFirst, firstAt);
    CallState state = e.state;
    state.eventCount = static_cast<std::uint16_t>(e.events.size());
    std::memcpy(p, &h, sizeof h);
    std::memcpy(p + sizeof h, &state, sizeof state);
    std::memcpy(p + kEventsAt, e.events.data(), e.events.size() * sizeof(CallEvent));
    char* q = p + kEventsAt + e.events.size() * sizeof(CallEvent);
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
    ++m_live;
    const auto entry = static_cast<std::uint32_t>(m_firstEntry + m_positions.size());
    m_positions.push_back(at);
    m_added.push_back({keyHash(Key::CallId, e.callId), entry, Key::CallId});
    if (!e.digest.empty())
        m_added.push_back({keyHash(Key::Digest, e.digest), entry, Key::Digest});
    if (!e.bizNo.empty())
        m_added.push_back({keyHash(Key::BizNo, e.bizNo), entry, Key::BizNo});
    if (m_added.size() >= 3 * 1024)
        indexAdded();
    return true;
}

std::uint64_t FrozenCalls::positionOf(std::uint32_t entry) const {
    if (entry < m_firstEntry || entry - m_firstEntry >= m_positions.size())
        return UINT64_MAX;
    const std::uint64_t at = m_positions[entry - m_firstEntry];
    return alive(at) ? at : UINT64_MAX;
}

FrozenCalls::Entry FrozenCalls::read(std::uint64_t at) const {
    const char* p = bytesAt(at);
    Header h;
    std::memcpy(&h, p, sizeof h);
    Entry e;
    std::memcpy(&e.state, p + sizeof h, sizeof e.state);
    e.events = {reinterpret_cast<const CallEvent*>(p + kEventsAt), e.state.eventCount};
    const char* q = p + kEventsAt + e.state.eventCount * sizeof(CallEvent);
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
    return e;
}

std::string_view FrozenCalls::keyText(std::uint64_t at, Key key) const {
    const char* p = bytesAt(at);
    Header h;
    std::memcpy(&h, p, sizeof h);
    std::uint16_t events = 0;
    std::memcpy(&events, p + sizeof h + offsetof(CallState, eventCount), 2);
    const char* q = p + kEventsAt + events * sizeof(CallEvent);
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
    if (!alive(at))
        return;
    Block& b = m_blocks[(at >> 32) - m_firstBlock];
    b.bytes[(at & 0xffffffffu) + offsetof(Header, alive)] = 0;
    b.live--;
    --m_live;
}

void FrozenCalls::index(Key key, std::uint64_t h, std::uint32_t entry) {
    if (key != Key::CallId && m_crowded.count(h))
        return;
    if ((m_filled + 1) * 2 > m_slots.size())
        rebuild(std::max<std::size_t>(1024, m_filled * 4)); // stale slots go, then a quarter full
    const std::uint32_t tag = tagOf(h);
    std::size_t same = 0;
    std::size_t i = slotFor(h, m_slots.size());
    for (; m_slots[i].tag != 0; i = i + 1 == m_slots.size() ? 0 : i + 1)
        same += key != Key::CallId && m_slots[i].tag == tag &&
                positionOf(m_slots[i].entry) != UINT64_MAX; // (a callId's count is not asked)
    // A digest or bizNo that many calls share (a placeholder) is not indexed
    // further: each lookup of it would walk them all.
    if (key != Key::CallId && same >= kMaxGroup) {
        m_crowded.insert(h);
        return;
    }
    m_slots[i] = {tag, entry};
    ++m_filled;
}

void FrozenCalls::rebuild(std::size_t capacity) {
    // An entry forgotten goes; one thawed stays until it is forgotten (rare:
    // reading each entry here would cost a cache miss a slot), and counts
    // toward the size: the table stays at most half full.
    std::size_t kept = 0;
    for (const Slot& s : m_slots)
        kept += s.tag != 0 && s.entry >= m_firstEntry;
    std::vector<Slot> slots(std::max<std::size_t>({capacity, 2 * kept + 2, 16}));
    std::size_t filled = 0;
    for (const Slot& s : m_slots) {
        if (s.tag == 0 || s.entry < m_firstEntry)
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
        const std::uint64_t at = positionOf(m_slots[i].entry);
        if (at != UINT64_MAX && keyText(at, key) == text)
            out.push_back(at);
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
    while (!m_blocks.empty() && m_blocks.front().latestFirst < t) {
        const Block& b = m_blocks.front();
        m_live -= b.live;
        m_bytes -= b.size;
        m_blocks.pop_front();
        ++m_firstBlock;
        while (!m_positions.empty() && (m_positions.front() >> 32) < m_firstBlock) {
            m_positions.pop_front();
            ++m_firstEntry;
        }
    }
    // Mostly stale (an entry has up to three keys): the table shrinks.
    if (m_filled > 1024 && m_filled > 6 * m_live)
        rebuild(std::max<std::size_t>(1024, m_live * 6));
}

void FrozenCalls::clear() {
    m_blocks.clear();
    m_firstBlock = 0;
    m_slots = {};
    m_positions.clear();
    m_firstEntry = 1;
    m_filled = m_live = m_bytes = 0;
    m_crowded.clear();
    m_added.clear();
}

std::size_t FrozenCalls::memoryBytes() const {
    return m_bytes + m_slots.capacity() * sizeof(Slot) + m_positions.size() * 8 +
           m_crowded.size() * 32 + m_added.capacity() * sizeof(Added);
}

} // namespace callscope
