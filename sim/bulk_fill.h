#pragma once
// `callscope sim --bulk-calls N`: writes N finished calls of history at once,
// for benchmarks at scale (issue 12). The records and attempt rows go in by
// COPY, the receipts and caller events are produced with their own
// timestamps, spread over the span that ends a few minutes before now: what a
// service that ran for that span would have left, without running it.
#include "sim/simulator.h"

namespace callscope {

struct BulkFillOptions {
    std::int64_t calls = 0;
    Millis span{12 * 3'600'000}; // the calls start over this span, ending 5 minutes ago
};

// Healthy calls, and key rotations at opt.faults[KeyRotation] (the only fault
// bulk fills inject; the truth file names them).
SimResult runBulkFill(const Config& config, const SimOptions& opt, const BulkFillOptions& bulk,
                      const std::atomic<bool>* stop = nullptr);

} // namespace callscope
