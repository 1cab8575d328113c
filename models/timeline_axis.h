#pragma once
// Time <-> x for a timeline of `width` pixels showing [from, to): zoom about
// an anchor (between a smallest and a largest span), pan, fit, the ticks of
// the time axis and how their labels read, and finding the item under a pixel
// by lower_bound on sorted times. Plain maths, tested without a display.
#include "models/timestamp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace callscope {

inline constexpr EpochMillis kMillisPerDay = 86'400'000;

struct TimeAxis {
    EpochMillis from = 0;
    EpochMillis to = 1000;
    double width = 1000; // pixels
    // Zoom-out stops here; a view sets it from what it shows (maxSpanFor).
    EpochMillis maxSpan = kMaxSpan;

    static constexpr EpochMillis kMinSpan = 10;                  // ms: zoom-in stops here
    static constexpr EpochMillis kMaxSpan = 400 * kMillisPerDay; // never years
    static constexpr EpochMillis kLoneSpan = 4000; // fit of a single instant: ±2 s around it

    // The largest span worth zooming out to for something that lasts `life`:
    // four times its life plus a minute, never more than kMaxSpan.
    static constexpr EpochMillis maxSpanFor(EpochMillis life) {
        const EpochMillis l = std::clamp<EpochMillis>(life, 0, kMaxSpan);
        return std::min<EpochMillis>(kMaxSpan, 4 * l + 60'000);
    }

    double span() const { return double(std::max<EpochMillis>(to - from, 1)); }
    double x(EpochMillis t) const { return double(t - from) * width / span(); }
    EpochMillis time(double px) const {
        return from + static_cast<EpochMillis>(std::llround(px * span() / std::max(width, 1.0)));
    }
    // Zooms by `factor` (> 1 zooms in) keeping the time under `anchorX` in
    // place; the span stays within [kMinSpan, maxSpan] (a view already wider
    // than maxSpan does not grow).
    void zoom(double factor, double anchorX) {
        if (factor <= 0)
            return;
        const EpochMillis anchor = time(anchorX);
        double newSpan = std::max(span() / factor, double(kMinSpan));
        if (factor < 1)
            newSpan = std::min(newSpan, std::max(span(), double(std::max(maxSpan, kMinSpan))));
        const double left = anchorX / std::max(width, 1.0) * newSpan;
        from = anchor - static_cast<EpochMillis>(std::llround(left));
        to = from + static_cast<EpochMillis>(std::llround(newSpan));
    }
    // Moves the view by `dx` pixels (a drag to the right shows earlier times).
    void pan(double dx) {
        const auto dt = static_cast<EpochMillis>(std::llround(dx * span() / std::max(width, 1.0)));
        from -= dt;
        to -= dt;
    }
    // Shows [a, b] with a margin of `margin` (fraction of the span) each side.
    void fit(EpochMillis a, EpochMillis b, double margin = 0.05) {
        const EpochMillis s = std::max<EpochMillis>(b - a, kMinSpan);
        const auto m = static_cast<EpochMillis>(std::llround(double(s) * margin));
        from = a - m;
        to = b + m;
    }
    // Shows a whole life [a, b]: as fit, but a single instant gets kLoneSpan
    // around it, and zoom-out is limited to maxSpanFor the life shown.
    void fitLife(EpochMillis a, EpochMillis b, double margin = 0.05) {
        if (b < a)
            std::swap(a, b);
        if (b - a <= 0) {
            from = a - kLoneSpan / 2;
            to = a + kLoneSpan / 2;
        } else {
            fit(a, b, margin);
        }
        maxSpan = std::max(maxSpanFor(b - a), to - from);
    }
    bool visible(EpochMillis t) const { return t >= from && t < to; }
};

// Days since 1970-01-01 -> (year, month, day) of the proleptic Gregorian
// calendar (H. Hinnant's civil_from_days).
struct CivilDate {
    int year = 1970, month = 1, day = 1;
};
constexpr CivilDate civilFromDays(std::int64_t z) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<int>(y + (m <= 2 ? 1 : 0)), static_cast<int>(m), static_cast<int>(d)};
}
// The day number of a wall-clock time `t` shown at UTC offset `offsetMs`.
constexpr std::int64_t dayOf(EpochMillis t, std::int64_t offsetMs = 0) {
    const EpochMillis w = t + offsetMs;
    return w >= 0 ? w / kMillisPerDay : -((-w + kMillisPerDay - 1) / kMillisPerDay);
}

// How a tick label reads: the time part as precise as the step needs, and the
// date (with the year) whenever the visible range crosses a day (a year), so
// that no two ticks can read the same.
struct TickFormat {
    enum class Date : std::uint8_t { None, MonthDay, YearMonthDay };
    enum class Time : std::uint8_t { None, Minutes, Seconds, Millis };
    Date date = Date::None;
    Time time = Time::Seconds;
    friend constexpr bool operator==(const TickFormat&, const TickFormat&) = default;
};

// Ticks every `step` ms over [from, to) in a zone `offsetMs` from UTC.
constexpr TickFormat tickFormat(EpochMillis from, EpochMillis to, EpochMillis step,
                                std::int64_t offsetMs = 0) {
    TickFormat f;
    if (step % 1000 != 0)
        f.time = TickFormat::Time::Millis;
    else if (step % 60'000 != 0)
        f.time = TickFormat::Time::Seconds;
    else if (step % kMillisPerDay != 0)
        f.time = TickFormat::Time::Minutes;
    else
        f.time = TickFormat::Time::None;
    const std::int64_t d0 = dayOf(from, offsetMs), d1 = dayOf(std::max(from, to - 1), offsetMs);
    if (civilFromDays(d0).year != civilFromDays(d1).year)
        f.date = TickFormat::Date::YearMonthDay;
    else if (d0 != d1 || f.time == TickFormat::Time::None)
        f.date = TickFormat::Date::MonthDay;
    return f;
}

// "Nice" tick steps, finest first: 1-2-5 within a second, then whole
// seconds, minutes, hours and days.
inline constexpr std::array<EpochMillis, 31> kTickSteps{1,
                                                        2,
                                                        5,
                                                        10,
                                                        20,
                                                        50,
                                                        100,
                                                        200,
                                                        500,
                                                        1000,
                                                        2000,
                                                        5000,
                                                        10'000,
                                                        15'000,
                                                        30'000,
                                                        60'000,
                                                        120'000,
                                                        300'000,
                                                        600'000,
                                                        900'000,
                                                        1'800'000,
                                                        3'600'000,
                                                        7'200'000,
                                                        10'800'000,
                                                        21'600'000,
                                                        43'200'000,
                                                        kMillisPerDay,
                                                        2 * kMillisPerDay,
                                                        7 * kMillisPerDay,
                                                        30 * kMillisPerDay,
                                                        90 * kMillisPerDay};

struct TickPlan {
    EpochMillis step = 1000;
    TickFormat format;
    EpochMillis first = 0; // the first tick at or after `from`, on a step of the zone's clock
};

// The finest step whose labels (as wide as `labelWidth(format)` pixels, plus
// `gap`) fit `width` pixels without overlapping.
template <typename LabelWidth>
TickPlan planTicks(const TimeAxis& axis, std::int64_t offsetMs, LabelWidth labelWidth,
                   double gap = 16) {
    const EpochMillis span = std::max<EpochMillis>(axis.to - axis.from, 1);
    TickPlan plan;
    plan.step = 0;
    for (const EpochMillis step : kTickSteps) {
        const TickFormat f = tickFormat(axis.from, axis.to, step, offsetMs);
        const double room = axis.width / std::max(1.0, double(labelWidth(f)) + gap);
        if (double(span) / double(step) <= std::max(1.0, room)) {
            plan.step = step;
            plan.format = f;
            break;
        }
    }
    if (plan.step == 0) { // wider than every step: whole multiples of 90 days
        const EpochMillis big = kTickSteps.back();
        const TickFormat f = tickFormat(axis.from, axis.to, big, offsetMs);
        const double room = std::max(1.0, axis.width / std::max(1.0, double(labelWidth(f)) + gap));
        plan.step = big * std::max<EpochMillis>(
                              1, static_cast<EpochMillis>(std::ceil(double(span) / big / room)));
        plan.format = f;
    }
    // Ticks fall on whole steps of the wall clock shown (local midnight, not UTC's).
    const EpochMillis w = axis.from + offsetMs;
    const EpochMillis q = w >= 0 ? (w + plan.step - 1) / plan.step : -((-w) / plan.step);
    plan.first = q * plan.step - offsetMs;
    return plan;
}

// The index of the item nearest to x within `tolerance` pixels among items
// sorted by time, or -1: lower_bound, then the neighbours.
template <typename Item, typename TimeOf>
int hitTest(const std::vector<Item>& sorted, TimeOf timeOf, const TimeAxis& axis, double x,
            double tolerance = 4.0) {
    const EpochMillis t = axis.time(x);
    auto it = std::lower_bound(sorted.begin(), sorted.end(), t,
                               [&](const Item& item, EpochMillis v) { return timeOf(item) < v; });
    int best = -1;
    double bestDistance = tolerance;
    for (auto c = it == sorted.begin() ? it : it - 1; c != sorted.end() && c <= it + 1; ++c) {
        const double d = std::abs(axis.x(timeOf(*c)) - x);
        if (d <= bestDistance) {
            bestDistance = d;
            best = static_cast<int>(c - sorted.begin());
        }
    }
    return best;
}

} // namespace callscope
