#pragma once
// How long to wait before retrying a source that is down: 1 s, doubling up to
// 30 s, back to 1 s once it answers. One policy for every retry loop (the
// PostgreSQL follower, watch's window load, the dashboard's connect).
#include <algorithm>
#include <cstdint>

namespace callscope {

class Backoff {
public:
    static constexpr std::int64_t kFirstMs = 1000, kMostMs = 30'000;
    // The wait before the next retry; the one after it is twice as long.
    std::int64_t next() {
        const std::int64_t wait = m_ms;
        m_ms = std::min(m_ms * 2, kMostMs);
        return wait;
    }
    void reset() { m_ms = kFirstMs; }

private:
    std::int64_t m_ms = kFirstMs;
};

} // namespace callscope
