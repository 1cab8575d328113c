#include "models/interner.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace callscope {
namespace {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
    const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
    return static_cast<std::uint64_t>(m) ^ static_cast<std::uint64_t>(m >> 64);
}

} // namespace

std::uint64_t hashText(std::string_view s) {
    // Eight bytes at a time, each word folded in by a 128-bit multiply (the
    // texts are callIds, digests and bizNos: 10 to 64 bytes).
    constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL;
    std::uint64_t h = k0 ^ s.size();
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = mix(h ^ w, k1);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    return mix(h ^ tail, k0 ^ k1);
}

namespace {

// A slot's tag: the hash's low bits, never 0 (0 marks an empty slot), so most
// probes past other texts are settled without reading their bytes. (The slot
// comes from the high bits: neighbours in a run share those, not these.)
std::uint8_t tagOf(std::uint64_t hash) {
    return static_cast<std::uint8_t>(0x80 | (hash & 0x7f));
}

#if !defined(__SSE2__)
// Lower-case hex digit -> value, else -1 (upper case stays unpacked so it
// prints back as written).
constexpr std::array<std::int8_t, 256> kHexValue = [] {
    std::array<std::int8_t, 256> t{};
    for (auto& v : t)
        v = -1;
    for (int c = '0'; c <= '9'; ++c)
        t[c] = static_cast<std::int8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c)
        t[c] = static_cast<std::int8_t>(c - 'a' + 10);
    return t;
}();
#endif

// Length byte of a packed digest: 32 bytes follow (texts shorter than 254 store
// their own length; 255 means a 4-byte length follows).
constexpr unsigned char kPackedLength = 254;

// A slot for `hash` in a table of any size (Lemire's fast range).
std::size_t slotFor(std::uint64_t hash, std::size_t size) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(hash) * size) >> 64);
}

} // namespace

std::string_view Interner::encode(std::string_view text, char* buf) const {
    if (m_packHex && text.size() == 64) {
        // The length byte itself starts the stored form; 0xFE never occurs in
        // UTF-8, so no text compares equal to a packed digest.
        buf[0] = static_cast<char>(kPackedLength);
#if defined(__SSE2__)
        // Every event carries a digest, and comparing one with a call's own
        // packs it first: 16 hex digits at a time (a tenth of the ingest
        // benchmark was the table lookups below).
        const __m128i zero = _mm_setzero_si128(), nine = _mm_set1_epi8(9), five = _mm_set1_epi8(5),
                      ten = _mm_set1_epi8(10), lowByte = _mm_set1_epi16(0x00ff);
        int ok = 0xffff;
        __m128i packed[4];
        for (int k = 0; k < 4; ++k) {
            const __m128i x =
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + 16 * k));
            const __m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
            const __m128i l = _mm_sub_epi8(x, _mm_set1_epi8('a'));
            const __m128i isDigit = _mm_cmpeq_epi8(_mm_subs_epu8(d, nine), zero);  // d <= 9
            const __m128i isLetter = _mm_cmpeq_epi8(_mm_subs_epu8(l, five), zero); // l <= 5
            ok &= _mm_movemask_epi8(_mm_or_si128(isDigit, isLetter));
            const __m128i v = _mm_or_si128(_mm_and_si128(isDigit, d),
                                           _mm_and_si128(isLetter, _mm_add_epi8(l, ten)));
            // Each 16-bit lane holds two digits, the first in its low byte.
            packed[k] =
                _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, lowByte), 4), _mm_srli_epi16(v, 8));
        }
        if (ok != 0xffff)
            return text;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 1),
                         _mm_packus_epi16(packed[0], packed[1]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 17),
                         _mm_packus_epi16(packed[2], packed[3]));
        return {buf, 33};
#else
        int bad = 0;
        for (std::size_t i = 0; i < 32; ++i) {
            const int hi = kHexValue[static_cast<unsigned char>(text[2 * i])];
            const int lo = kHexValue[static_cast<unsigned char>(text[2 * i + 1])];
            bad |= hi | lo; // any -1 sets the sign bit
            buf[i + 1] = static_cast<char>(hi << 4 | lo);
        }
        if (bad < 0)
            return text;
        return {buf, 33};
#endif
    }
    return text;
}

std::string_view Interner::stored(std::uint32_t id) const {
    const std::uint64_t at = m_offsets[id];
    const char* p = m_blocks[at >> 32].get() + (at & 0xffffffffu);
    std::uint32_t len = static_cast<unsigned char>(p[0]);
    if (len == kPackedLength)
        return {p, 33};
    std::size_t head = 1;
    if (len == 255) { // long text: 4-byte length follows
        std::memcpy(&len, p + 1, 4);
        head = 5;
    }
    return {p + head, len};
}

std::uint32_t Interner::prefetchKept(std::uint64_t hash) const {
    const std::size_t n = m_slots.size();
    if (n == 0)
        return 0;
    const std::uint8_t tag = tagOf(hash);
    for (std::size_t i = slotFor(hash, n); m_tags[i] != 0; i = i + 1 == n ? 0 : i + 1)
        if (m_tags[i] == tag) {
            __builtin_prefetch(&m_offsets[m_slots[i]]);
            return m_slots[i];
        }
    return 0;
}

std::uint32_t Interner::lookup(std::string_view encoded, std::uint64_t hash,
                               std::size_t* emptySlot) const {
    const std::size_t n = m_slots.size();
    if (n == 0)
        return 0;
    const std::uint8_t tag = tagOf(hash);
    for (std::size_t i = slotFor(hash, n);; i = i + 1 == n ? 0 : i + 1) {
        const std::uint8_t t = m_tags[i];
        if (t == 0) {
            if (emptySlot)
                *emptySlot = i;
            return 0;
        }
        if (t == tag) {
            const std::uint32_t id = m_slots[i];
            if (stored(id) == encoded)
                return id;
        }
    }
}

void Interner::grow() {
    // 1.5x steps keep the table between about 50% and 75% full.
    const std::size_t n = m_slots.empty() ? 1024 : m_slots.size() * 3 / 2;
    std::vector<std::uint32_t> slots(n, 0);
    std::vector<std::uint8_t> tags(n, 0);
    for (std::uint32_t id = 1; id < m_offsets.size(); ++id) {
        const std::uint64_t h = hashText(stored(id));
        std::size_t i = slotFor(h, n);
        while (tags[i] != 0)
            i = i + 1 == n ? 0 : i + 1;
        slots[i] = id;
        tags[i] = tagOf(h);
    }
    m_slots.swap(slots);
    m_tags.swap(tags);
}

void Interner::reserve(std::size_t n) {
    m_offsets.reserve(n + 1);
    while (m_slots.size() * 3 < n * 4)
        grow();
}

std::uint32_t Interner::intern(std::string_view text) {
    if (text.empty())
        return 0;
    char buf[40];
    return internEncoded(encode(text, buf));
}

std::uint32_t Interner::internFrom(const Interner& other, std::uint32_t id) {
    if (id == 0 || id >= other.m_offsets.size())
        return 0;
    return internEncoded(other.stored(id));
}

std::uint64_t Interner::prefetch(std::string_view text) const {
    if (text.empty())
        return 0;
    char buf[40];
    return prefetchEncoded(encode(text, buf));
}

void Interner::prefetchFrom(const Interner& other, std::uint32_t id) const {
    if (id != 0 && id < other.m_offsets.size() && !m_slots.empty())
        prefetchEncoded(other.stored(id));
}

std::uint64_t Interner::prefetchEncoded(std::string_view encoded) const {
    const std::uint64_t h = hashText(encoded);
    if (m_slots.empty())
        return h;
    const std::size_t i = slotFor(h, m_slots.size());
    __builtin_prefetch(&m_tags[i]);
    __builtin_prefetch(&m_slots[i]);
    return h;
}

std::uint32_t Interner::internHashed(std::string_view text, std::uint64_t hash) {
    if (text.empty())
        return 0;
    char buf[40];
    return internEncoded(encode(text, buf), hash);
}

std::uint32_t Interner::intern(std::string_view text, std::uint64_t& hash) {
    hash = 0;
    if (text.empty())
        return 0;
    char buf[40];
    const std::string_view enc = encode(text, buf);
    hash = hashText(enc);
    return internEncoded(enc, hash);
}

std::uint32_t Interner::internEncoded(std::string_view enc) {
    return internEncoded(enc, hashText(enc));
}

std::uint32_t Interner::internEncoded(std::string_view enc, std::uint64_t h) {
    std::size_t slot = 0;
    if (const std::uint32_t id = lookup(enc, h, &slot))
        return id;
    if ((m_offsets.size() + 1) * 4 > m_slots.size() * 3) {
        grow();
        lookup(enc, h, &slot);
    }
    const auto id = static_cast<std::uint32_t>(m_offsets.size());
    const bool packed = enc.size() == 33 && static_cast<unsigned char>(enc[0]) == kPackedLength;
    // A packed digest's length byte is part of `enc`; other texts get one (or
    // 255 and four).
    const std::size_t head = packed ? 0 : enc.size() < kPackedLength ? 1 : 5;
    std::uint64_t where = 0;
    char* p = place(head + enc.size(), where);
    if (head == 1) {
        p[0] = static_cast<char>(enc.size());
    } else if (head == 5) {
        p[0] = static_cast<char>(255);
        const auto len = static_cast<std::uint32_t>(enc.size());
        std::memcpy(p + 1, &len, 4);
    }
    std::memcpy(p + head, enc.data(), enc.size());
    m_offsets.push_back(where);
    m_slots[slot] = id;
    m_tags[slot] = tagOf(h);
    return id;
}

char* Interner::place(std::size_t bytes, std::uint64_t& where) {
    if (bytes > kBlockBytes) { // a block of its own; the next text opens another
        m_blocks.push_back(std::make_unique<char[]>(bytes));
        m_blockBytes += bytes;
        m_blockUsed = m_blockSize;
        where = std::uint64_t(m_blocks.size() - 1) << 32;
        return m_blocks.back().get();
    }
    if (m_blockUsed + bytes > m_blockSize) {
        // Blocks grow with the texts held, from 4 KiB to 1 MiB: a small
        // interner stays small, a large one wastes at most a block's end.
        m_blockSize =
            std::clamp<std::size_t>(m_blockBytes, std::max<std::size_t>(bytes, 4096), kBlockBytes);
        m_blocks.push_back(std::make_unique<char[]>(m_blockSize));
        m_blockBytes += m_blockSize;
        m_blockUsed = 0;
    }
    where = std::uint64_t(m_blocks.size() - 1) << 32 | m_blockUsed;
    char* p = m_blocks.back().get() + m_blockUsed;
    m_blockUsed += bytes;
    return p;
}

std::uint32_t Interner::find(std::string_view text) const {
    if (text.empty())
        return 0;
    char buf[40];
    const std::string_view enc = encode(text, buf);
    return lookup(enc, hashText(enc), nullptr);
}

bool Interner::equals(std::uint32_t id, std::string_view text) const {
    if (id == 0 || id >= m_offsets.size())
        return text.empty();
    char buf[40];
    return stored(id) == encode(text, buf);
}

std::string Interner::text(std::uint32_t id) const {
    if (id == 0 || id >= m_offsets.size())
        return {};
    const std::string_view s = stored(id);
    if (m_packHex && s.size() == 33 && static_cast<unsigned char>(s[0]) == kPackedLength) {
        static const char* digits = "0123456789abcdef";
        std::string hex(64, '0');
        for (std::size_t i = 0; i < 32; ++i) {
            const auto b = static_cast<unsigned char>(s[i + 1]);
            hex[2 * i] = digits[b >> 4];
            hex[2 * i + 1] = digits[b & 15];
        }
        return hex;
    }
    return std::string(s);
}

std::size_t Interner::memoryBytes() const {
    return m_blockBytes + m_blocks.capacity() * sizeof(void*) +
           m_offsets.capacity() * sizeof(std::uint64_t) + m_slots.capacity() * 4 +
           m_tags.capacity();
}

} // namespace callscope
