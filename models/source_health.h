#pragma once
// The health of one source, as the connectors report it and every surface
// shows it (watch's stderr, the dashboard's indicators).
#include "models/observations.h"

#include <cstdint>
#include <string>

namespace callscope {

// A source as the surfaces show it: its own state on its own indicator.
enum class SourceState : std::uint8_t {
    NotRead,    // not part of this deployment
    Connecting, // not reached yet
    Loading,    // reading the window (loadPercent)
    Live,       // following, up to date
    Lagging,    // following, but what it has read is older than it should be
    Quiet,      // following, up to date, but nothing new for longer than quiet_after
    Down,       // unreachable: lastError
};
inline const char* toString(SourceState state) {
    switch (state) {
    case SourceState::NotRead:
        return "not read";
    case SourceState::Connecting:
        return "connecting";
    case SourceState::Loading:
        return "loading";
    case SourceState::Live:
        return "live";
    case SourceState::Lagging:
        return "lagging";
    case SourceState::Quiet:
        return "quiet";
    case SourceState::Down:
        return "down";
    }
    return "?";
}

struct SourceHealth {
    std::string source; // "postgres" / "kafka"
    bool connected = false;
    std::string lastError; // "" when fine; never holds a password
    EpochMillis lastOkAt = kNoTime;
    std::int64_t lag = 0;   // messages (Kafka) not yet read
    std::string note;       // worth knowing while connected (a gap, a deleted topic)
    bool configured = true; // false: not part of this deployment (not read, not an outage)

    // Filled in by the Monitor (sources report the fields above).
    SourceState state = SourceState::Connecting;
    int loadPercent = -1;              // while Loading, when known
    EpochMillis since = kNoTime;       // in this state since
    EpochMillis lastDataAt = kNoTime;  // when something new was last read
    EpochMillis readTo = kNoTime;      // everything written before this has been read
    EpochMillis lastErrorAt = kNoTime; // when lastError happened (kept after recovery)
};

} // namespace callscope
