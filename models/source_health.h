#pragma once
// The health of one source, as the connectors report it and every surface
// shows it (watch's stderr, the dashboard's indicators).
#include "models/observations.h"

#include <cstdint>
#include <string>

namespace callscope {

struct SourceHealth {
    std::string source; // "postgres" / "kafka"
    bool connected = false;
    std::string lastError; // "" when fine; never holds a password
    EpochMillis lastOkAt = kNoTime;
    std::int64_t lag = 0;   // messages (Kafka) not yet read
    std::string note;       // worth knowing while connected (a gap, a deleted topic)
    bool configured = true; // false: not part of this deployment (not read, not an outage)
};

} // namespace callscope
