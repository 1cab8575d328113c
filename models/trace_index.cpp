#include "models/trace_index.h"

#include "models/interner.h"

namespace callscope {
namespace {

std::uint64_t keyOf(std::string_view traceId) {
    const std::uint64_t h = hashText(traceId);
    return h == 0 ? 1 : h;
}

} // namespace

std::size_t TraceIndex::probe(std::uint64_t key) const {
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = key & mask;; i = (i + 1) & mask)
        if (m_slots[i].key == key || m_slots[i].key == 0)
            return i;
}

void TraceIndex::grow() {
    std::vector<Slot> old;
    old.swap(m_slots);
    m_slots.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    for (const Slot& s : old)
        if (s.key != 0)
            m_slots[probe(s.key)] = s;
}

std::uint32_t TraceIndex::note(std::string_view traceId, std::uint32_t call) {
    if (traceId.empty())
        return kNone;
    if ((m_used + 1) * 4 > m_slots.size() * 3) // load at most 3/4
        grow();
    const std::uint64_t key = keyOf(traceId);
    Slot& s = m_slots[probe(key)];
    if (s.key == 0) {
        s = Slot{key, call, 0};
        ++m_used;
        return kNone;
    }
    if (s.call == call || s.others > kMaxCallsPerTrace)
        return kNone;
    return s.call;
}

void TraceIndex::prefetch(std::string_view traceId) const {
    if (!traceId.empty() && !m_slots.empty())
        __builtin_prefetch(&m_slots[keyOf(traceId) & (m_slots.size() - 1)]);
}

bool TraceIndex::addCarrier(std::string_view traceId) {
    if (traceId.empty() || m_slots.empty())
        return false;
    Slot& s = m_slots[probe(keyOf(traceId))];
    if (s.key == 0)
        return false;
    return ++s.others <= kMaxCallsPerTrace;
}

bool TraceIndex::placeholder(std::string_view traceId) const {
    if (traceId.empty() || m_slots.empty())
        return false;
    const Slot& s = m_slots[probe(keyOf(traceId))];
    return s.key != 0 && s.others > kMaxCallsPerTrace;
}

void TraceIndex::remap(const std::vector<std::uint32_t>& map) {
    // In place (a table as large again allocated and filled each compaction
    // was a tenth of it, its pages faulted in anew): the slots of calls gone
    // are emptied, then each key left is placed again where a probe from
    // its home finds it first. Walked from a slot that was empty before
    // (no probe crossed it), each lands at or before where it was.
    if (m_slots.empty())
        return;
    const std::size_t size = m_slots.size(), mask = size - 1;
    std::size_t start = 0;
    while (m_slots[start].key != 0)
        ++start; // (at most 3/4 full: there is one)
    for (Slot& s : m_slots) {
        // A placeholder stays known whoever carried it first.
        if (s.key == 0 || s.others > kMaxCallsPerTrace)
            continue;
        if (s.call >= map.size() || map[s.call] == UINT32_MAX)
            s = Slot{};
        else
            s.call = map[s.call];
    }
    m_used = 0;
    for (std::size_t n = 1; n <= size; ++n) {
        const std::size_t i = (start + n) & mask;
        if (m_slots[i].key == 0)
            continue;
        const Slot s = m_slots[i];
        m_slots[i] = Slot{};
        m_slots[probe(s.key)] = s;
        ++m_used;
    }
}

std::size_t TraceIndex::memoryBytes() const {
    return m_slots.capacity() * sizeof(Slot);
}

} // namespace callscope
