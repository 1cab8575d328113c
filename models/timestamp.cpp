#include "models/timestamp.h"

#include <charconv>
#include <chrono>
#include <cstdio>

namespace callscope {
namespace {

bool readInt(std::string_view s, std::size_t pos, std::size_t len, int& out) {
    if (pos + len > s.size())
        return false;
    for (std::size_t i = pos; i < pos + len; ++i)
        if (s[i] < '0' || s[i] > '9')
            return false;
    std::from_chars(s.data() + pos, s.data() + pos + len, out);
    return true;
}

} // namespace

std::string formatIsoMillis(EpochMillis t) {
    using namespace std::chrono;
    const sys_time<milliseconds> tp{milliseconds{t}};
    const auto day = floor<days>(tp);
    const year_month_day ymd{day};
    const hh_mm_ss hms{tp - day};
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", int(ymd.year()),
                  unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                  int(hms.minutes().count()), int(hms.seconds().count()),
                  int(hms.subseconds().count()));
    return buf;
}

std::optional<EpochMillis> parseTimestamp(std::string_view s) {
    using namespace std::chrono;
    if (!s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos) {
        EpochMillis v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || p != s.data() + s.size())
            return std::nullopt;
        return v;
    }
    int y, mo, d, h, mi, sec;
    if (!readInt(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !readInt(s, 5, 2, mo) ||
        s[7] != '-' || !readInt(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !readInt(s, 11, 2, h) || s[13] != ':' || !readInt(s, 14, 2, mi) || s[16] != ':' ||
        !readInt(s, 17, 2, sec))
        return std::nullopt;
    const year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
    if (!ymd.ok() || h > 23 || mi > 59 || sec > 60)
        return std::nullopt;
    std::size_t pos = 19;
    int millis = 0;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        int scale = 100, ndigits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
            millis += (s[pos] - '0') * scale;
            scale /= 10;
            ++pos;
            ++ndigits;
        }
        if (ndigits == 0)
            return std::nullopt;
    }
    int offsetMinutes = 0;
    if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
        ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
        const int sign = s[pos] == '-' ? -1 : 1;
        int oh = 0, om = 0;
        if (!readInt(s, pos + 1, 2, oh))
            return std::nullopt;
        std::size_t mpos = pos + 3;
        if (mpos < s.size() && s[mpos] == ':')
            ++mpos;
        if (!readInt(s, mpos, 2, om) || oh > 23 || om > 59)
            return std::nullopt;
        offsetMinutes = sign * (oh * 60 + om);
        pos = mpos + 2;
    } else {
        return std::nullopt; // a zone is required: local times are ambiguous
    }
    if (pos != s.size())
        return std::nullopt;
    const auto t = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} + milliseconds{millis} -
                   minutes{offsetMinutes};
    return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

EpochMillis nowMillis() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace callscope
