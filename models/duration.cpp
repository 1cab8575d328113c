#include "models/duration.h"

#include <charconv>
#include <cstdint>

namespace callscope {

std::optional<Millis> parseDuration(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    if (digits == 0 || digits == text.size())
        return std::nullopt;
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
    if (ec != std::errc{} || ptr != text.data() + digits || value <= 0)
        return std::nullopt;
    const std::string_view unit = text.substr(digits);
    std::int64_t scale = 0;
    if (unit == "ms")
        scale = 1;
    else if (unit == "s")
        scale = 1000;
    else if (unit == "m")
        scale = 60'000;
    else if (unit == "h")
        scale = 3'600'000;
    else if (unit == "d")
        scale = 86'400'000;
    else
        return std::nullopt;
    if (value > INT64_MAX / scale)
        return std::nullopt;
    return Millis{value * scale};
}

std::string formatDuration(Millis d) {
    const std::int64_t ms = d.count();
    struct Unit {
        std::int64_t scale;
        const char* name;
    };
    for (const Unit u :
         {Unit{86'400'000, "d"}, Unit{3'600'000, "h"}, Unit{60'000, "m"}, Unit{1000, "s"}}) {
        if (ms != 0 && ms % u.scale == 0)
            return std::to_string(ms / u.scale) + u.name;
    }
    return std::to_string(ms) + "ms";
}

} // namespace callscope
