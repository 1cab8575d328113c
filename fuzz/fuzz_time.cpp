// Durations ("5m", "1h30m") and timestamps (ISO 8601, epoch seconds or
// millis) from options, configs and messages: any text.
#include "models/duration.h"
#include "models/timestamp.h"

#include <cstdint>
#include <cstdlib>

using namespace callscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto d = parseDuration(text); d && d->count() < 0)
        std::abort(); // a duration is never negative
    if (const auto t = parseTimestamp(text))
        (void)formatIsoMillis(*t);
    return 0;
}
