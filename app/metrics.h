#pragma once
// `watch --metrics HOST:PORT` (issue 14): Prometheus metrics over HTTP with
// prometheus-cpp, named after Prometheus' conventions — a callscope_ prefix,
// base units (_seconds, _bytes), _total counters — and labelled only by
// bounded words (kind, severity, source, reason): never a callId, an instance
// or a topic. The watch loop updates them once a second.
#include "app/exec_runner.h"
#include "app/monitor.h"

#include <memory>
#include <string>
#include <vector>

namespace callscope {

class MetricsServer {
public:
    // Listens on HOST:PORT ("127.0.0.1:9464", ":9464" for every address);
    // throws std::runtime_error saying why it cannot.
    explicit MetricsServer(const std::string& hostPort);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    std::vector<int> ports() const;
    // An anomaly change, as watch prints it: counts the opened ones by kind
    // and observes how long after its first event each was detected.
    void anomalyChanged(const AnomalyChange& change, EpochMillis now);
    // The current figures (the model thread's: the watch loop).
    void update(Monitor& monitor, EpochMillis now, const ExecStats* exec);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
