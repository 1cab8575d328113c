#pragma once
// Which call first carried each traceId (caller events and attempts), so a
// traceId that comes back under another callId is seen at once: the callId
// was replaced between caller and server (callid_rewritten) or made again in
// the same trace. Only a 64-bit hash of the traceId is kept: a traceId costs
// about 20 bytes, not a copy of its text.
#include <cstdint>
#include <string_view>
#include <vector>

namespace callscope {

class TraceIndex {
public:
    static constexpr std::uint32_t kNone = UINT32_MAX;
    // A traceId carried by more than this many calls is a placeholder ("-",
    // "0"), not a trace: it links nothing.
    static constexpr int kMaxCallsPerTrace = 4;

    // `call` carried `traceId`. Returns the call that carried it first when
    // that is another one, else kNone (first seen, the same call, or a placeholder).
    std::uint32_t note(std::string_view traceId, std::uint32_t call);
    // Fetches the slot a note of `traceId` reads first (see Interner::prefetch).
    void prefetch(std::string_view traceId) const;
    // Another call than the first carries `traceId` (told once per call);
    // returns false once that makes the traceId a placeholder.
    bool addCarrier(std::string_view traceId);
    // The traceId is carried by too many calls to mean anything.
    bool placeholder(std::string_view traceId) const;
    // The store was compacted: old call index -> new (UINT32_MAX when gone).
    void remap(const std::vector<std::uint32_t>& map);
    std::size_t size() const { return m_used; }
    std::size_t memoryBytes() const;

private:
    struct Slot {
        std::uint64_t key = 0;      // the traceId's hash, never 0; 0 = empty
        std::uint32_t call = kNone; // the first carrier
        std::uint32_t others = 0;   // how many other calls carried it since
    };
    std::size_t probe(std::uint64_t key) const;
    void grow();

    std::vector<Slot> m_slots;
    std::size_t m_used = 0;
};

} // namespace callscope
