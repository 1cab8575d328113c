#pragma once
// Varints (7 bits a byte, low first, at most 10 for 64 bits): the packed
// forms of frozen calls and of queued batches.
#include <cstddef>
#include <cstdint>

namespace callscope {

inline constexpr std::size_t kMaxVarintBytes = 10;

inline char* putVarint(char* q, std::uint64_t v) {
    while (v >= 0x80) {
        *q++ = static_cast<char>(v | 0x80);
        v >>= 7;
    }
    *q++ = static_cast<char>(v);
    return q;
}

inline const char* getVarint(const char* q, std::uint64_t& v) {
    v = 0;
    for (int shift = 0;; shift += 7) {
        const auto b = static_cast<std::uint8_t>(*q++);
        v |= std::uint64_t{b & 0x7fu} << shift;
        if (b < 0x80 || shift >= 63)
            return q;
    }
}

} // namespace callscope
