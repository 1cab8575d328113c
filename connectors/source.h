#pragma once
// The connector interface: a source loads a time window, then follows live,
// handing batches of immutable observations to a sink and reporting its
// health. Sources run on their own threads; sinks must be thread-safe.
#include "models/observations.h"
#include "models/source_health.h"

#include <atomic>
#include <stdexcept>
#include <string>

namespace callscope {

class ObservationSink {
public:
    virtual ~ObservationSink() = default;
    // Takes what `batch` holds and leaves it empty, to be filled again (its
    // observations may stay, spent: Monitor packs them and keeps none).
    virtual void deliver(ObservationBatch&& batch) = 0;
    virtual void health(const SourceHealth& health) = 0;
    // Receipts have been read over [from, to] (SPEC §3 receipt_missing).
    virtual void receiptCoverage(EpochMillis from, EpochMillis to) { (void)from, (void)to; }
    // The tables have been read as they stood at `to`.
    virtual void recordCoverage(EpochMillis to) { (void)to; }
    // Everything `source` had when `to` came has been read (a source's lag).
    virtual void readTo(const std::string& source, EpochMillis to) { (void)source, (void)to; }
    // While a window loads: `source` has read everything stamped before `t`
    // (older data will not come any more). The sink may hold the source here
    // until the other sources catch up, so that they move through time
    // together and what is final can leave memory (issue 12); it returns at
    // once when `cancel` is set.
    virtual void loadedUpTo(const std::string& source, EpochMillis t,
                            const std::atomic<bool>& cancel) {
        (void)source, (void)t, (void)cancel;
    }
    // While a window loads: `source` reads it in slices of `length` now (the
    // sink lets the other sources run ahead by about two of them).
    virtual void sliceLength(const std::string& source, Millis length) {
        (void)source, (void)length;
    }
    // How much of the window `source` has read, 0..100.
    virtual void loadProgress(const std::string& source, int percent) {
        (void)source, (void)percent;
    }
};

// A problem the user can act on. Config errors (a mapped column that does not
// exist) end the program with exit code 2; others are outages.
struct SourceError : std::runtime_error {
    SourceError(const std::string& what, bool config = false)
        : std::runtime_error(what), configError(config) {}
    bool configError;
};

class Source {
public:
    virtual ~Source() = default;
    virtual std::string name() const = 0;
    // Reads [since, until) and returns; throws SourceError.
    virtual void loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                            const std::atomic<bool>& cancel) = 0;
    // Follows new data from where loadWindow stopped until `stop`; outages are
    // reported through sink.health and retried with backoff.
    virtual void follow(ObservationSink& sink, const std::atomic<bool>& stop) = 0;
};

} // namespace callscope
