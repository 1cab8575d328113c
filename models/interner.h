#pragma once
// Interned strings: each distinct text is kept once and named by a dense
// uint32 id (0 means "none"). Ids are stable for the interner's lifetime;
// the store rebuilds interners when it compacts.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// A 64-bit hash of a short text (the interner's own).
std::uint64_t hashText(std::string_view s);

class Interner {
public:
    // Digests (64 hex chars, SHA-256) are kept packed in 32 bytes when
    // packHex is set; every other text is kept as it is.
    explicit Interner(bool packHex = false) : m_packHex(packHex) {}

    std::uint32_t intern(std::string_view text); // 0 for empty text
    // The same, telling the hash of the text as kept (see storedForm).
    std::uint32_t intern(std::string_view text, std::uint64_t& hash);
    // The same, with the hash prefetch() returned for the text.
    std::uint32_t internHashed(std::string_view text, std::uint64_t hash);
    // intern(other.text(id)) without unpacking and packing a digest again
    // (both interners pack alike).
    std::uint32_t internFrom(const Interner& other, std::uint32_t id);
    // Fetches the slot an intern or find of `text` reads first: a loop over
    // many texts asks a few ahead of the one it interns, so that a large
    // table's cache misses overlap instead of coming one after another.
    // Returns the hash of the text as kept (0 for empty text), for a caller
    // that looks the same text up elsewhere.
    std::uint64_t prefetch(std::string_view text) const;
    void prefetchFrom(const Interner& other, std::uint32_t id) const; // of internFrom
    // The second step of a prefetch, a few turns later (its slot is fetched
    // by then): 0 when the text is surely not kept; else the id it most
    // likely has (the first whose tag matches), where that text is found
    // being fetched.
    std::uint32_t prefetchKept(std::uint64_t hash) const;
    // The third: fetches the text of an id (where it is found was fetched).
    void prefetchText(std::uint32_t id) const {
        if (id != 0 && id < m_offsets.size()) {
            const std::uint64_t at = m_offsets[id];
            __builtin_prefetch(m_blocks[at >> 32].get() + (at & 0xffffffffu));
        }
    }
    // Fetches where the text of an id is found.
    void prefetchWhere(std::uint32_t id) const {
        if (id < m_offsets.size())
            __builtin_prefetch(&m_offsets[id]);
    }
    std::uint32_t find(std::string_view text) const; // 0 when absent
    // A text as kept (a digest packed), and interning of that form: a copy
    // kept elsewhere comes back without unpacking and packing.
    std::string_view storedForm(std::uint32_t id) const {
        return id == 0 || id >= m_offsets.size() ? std::string_view{} : stored(id);
    }
    std::uint32_t internStored(std::string_view storedText) {
        return storedText.empty() ? 0 : internEncoded(storedText);
    }
    bool equals(std::uint32_t id, std::string_view text) const;
    std::string text(std::uint32_t id) const;
    std::size_t size() const { return m_offsets.size() - 1; }
    std::size_t memoryBytes() const;
    void reserve(std::size_t n);

private:
    // The stored form of `text`: itself, or packed into `buf` (33 bytes).
    std::string_view encode(std::string_view text, char* buf) const;
    std::string_view stored(std::uint32_t id) const;
    std::uint32_t internEncoded(std::string_view encoded);
    std::uint32_t internEncoded(std::string_view encoded, std::uint64_t hash);
    std::uint64_t prefetchEncoded(std::string_view encoded) const;
    // The id of `encoded`, or 0 and (when asked) the empty slot that ended the probe.
    std::uint32_t lookup(std::string_view encoded, std::uint64_t hash,
                         std::size_t* emptySlot) const;
    void grow();

    bool m_packHex;
    // Length-prefixed entries in blocks of up to 1 MiB (a longer text has a
    // block of its own): growing never copies the texts or holds them twice, as a
    // vector's doubling did (a fifth of a 1M-call scan's peak).
    static constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
    char* place(std::size_t bytes, std::uint64_t& where);
    std::vector<std::unique_ptr<char[]>> m_blocks;
    std::size_t m_blockSize = 0;  // of the last block
    std::size_t m_blockUsed = 0;  // in it
    std::size_t m_blockBytes = 0; // allocated, for memoryBytes()
    // id -> block << 32 | offset in it (id 0 unused).
    std::vector<std::uint64_t> m_offsets{0};
    std::vector<std::uint32_t> m_slots; // open addressing: id
    std::vector<std::uint8_t> m_tags;   // per slot: 0 empty, else a tag of the hash
};

} // namespace callscope
