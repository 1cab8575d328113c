#include "models/interner.h"

#include <cstring>

namespace callscope {
namespace {

std::uint64_t hashBytes(std::string_view s) {
    // FNV-1a, then a final mix so low bits are usable for the table.
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

int hexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; // upper case stays unpacked so it prints back as written
}

constexpr unsigned char kPackedMarker = 0xFF;

} // namespace

std::string Interner::encode(std::string_view text) const {
    if (m_packHex && text.size() == 64) {
        std::string packed(33, '\0');
        packed[0] = static_cast<char>(kPackedMarker);
        for (std::size_t i = 0; i < 32; ++i) {
            const int hi = hexValue(text[2 * i]), lo = hexValue(text[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return std::string(text);
            packed[i + 1] = static_cast<char>(hi << 4 | lo);
        }
        return packed;
    }
    return std::string(text);
}

std::string_view Interner::stored(std::uint32_t id) const {
    const char* p = m_bytes.data() + m_offsets[id];
    std::uint32_t len = static_cast<unsigned char>(p[0]);
    std::size_t head = 1;
    if (len == 255) { // long text: 4-byte length follows
        std::memcpy(&len, p + 1, 4);
        head = 5;
    }
    return {p + head, len};
}

std::uint32_t Interner::lookup(std::string_view encoded, std::uint64_t hash) const {
    if (m_slots.empty())
        return 0;
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
        const std::uint32_t id = m_slots[i];
        if (id == 0)
            return 0;
        if (stored(id) == encoded)
            return id;
    }
}

void Interner::grow() {
    const std::size_t n = m_slots.empty() ? 1024 : m_slots.size() * 2;
    std::vector<std::uint32_t> slots(n, 0);
    const std::size_t mask = n - 1;
    for (std::uint32_t id = 1; id < m_offsets.size(); ++id) {
        std::size_t i = hashBytes(stored(id)) & mask;
        while (slots[i] != 0)
            i = (i + 1) & mask;
        slots[i] = id;
    }
    m_slots.swap(slots);
}

void Interner::reserve(std::size_t n) {
    m_offsets.reserve(n + 1);
    while (m_slots.size() < n * 2)
        grow();
}

std::uint32_t Interner::intern(std::string_view text) {
    if (text.empty())
        return 0;
    const std::string enc = encode(text);
    const std::uint64_t h = hashBytes(enc);
    if (const std::uint32_t id = lookup(enc, h))
        return id;
    if ((m_offsets.size() + 1) * 10 > m_slots.size() * 7)
        grow();
    const auto id = static_cast<std::uint32_t>(m_offsets.size());
    m_offsets.push_back(static_cast<std::uint32_t>(m_bytes.size()));
    if (enc.size() < 255) {
        m_bytes.push_back(static_cast<char>(enc.size()));
    } else {
        m_bytes.push_back(static_cast<char>(255));
        const auto len = static_cast<std::uint32_t>(enc.size());
        m_bytes.insert(m_bytes.end(), reinterpret_cast<const char*>(&len),
                       reinterpret_cast<const char*>(&len) + 4);
    }
    m_bytes.insert(m_bytes.end(), enc.begin(), enc.end());
    const std::size_t mask = m_slots.size() - 1;
    std::size_t i = h & mask;
    while (m_slots[i] != 0)
        i = (i + 1) & mask;
    m_slots[i] = id;
    return id;
}

std::uint32_t Interner::find(std::string_view text) const {
    if (text.empty())
        return 0;
    const std::string enc = encode(text);
    return lookup(enc, hashBytes(enc));
}

std::string Interner::text(std::uint32_t id) const {
    if (id == 0 || id >= m_offsets.size())
        return {};
    const std::string_view s = stored(id);
    if (m_packHex && s.size() == 33 && static_cast<unsigned char>(s[0]) == kPackedMarker) {
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
    return m_bytes.capacity() + m_offsets.capacity() * 4 + m_slots.capacity() * 4;
}

} // namespace callscope
