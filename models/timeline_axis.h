#pragma once
// Time <-> x for a timeline of `width` pixels showing [from, to): zoom about
// an anchor, pan, fit, and finding the item under a pixel by lower_bound on
// sorted times. Plain maths, tested without a display.
#include "models/timestamp.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace callscope {

struct TimeAxis {
    EpochMillis from = 0;
    EpochMillis to = 1000;
    double width = 1000; // pixels

    static constexpr EpochMillis kMinSpan = 10; // ms: zoom stops here

    double span() const { return double(std::max<EpochMillis>(to - from, 1)); }
    double x(EpochMillis t) const { return double(t - from) * width / span(); }
    EpochMillis time(double px) const {
        return from + static_cast<EpochMillis>(std::llround(px * span() / std::max(width, 1.0)));
    }
    // Zooms by `factor` (> 1 zooms in) keeping the time under `anchorX` in place.
    void zoom(double factor, double anchorX) {
        if (factor <= 0)
            return;
        const EpochMillis anchor = time(anchorX);
        const double newSpan = std::max(span() / factor, double(kMinSpan));
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
    bool visible(EpochMillis t) const { return t >= from && t < to; }
};

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
