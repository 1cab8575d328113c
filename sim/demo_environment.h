#pragma once
// `callscope demo` needs nothing running: a throwaway PostgreSQL cluster
// (initdb into a temporary directory, removed on exit; run as the postgres
// user when we are root) and librdkafka's in-process mock Kafka cluster.
#include "connectors/config.h"

#include <memory>
#include <string>

namespace callscope {

class DemoEnvironment {
public:
    // Starts both; throws std::runtime_error with what went wrong.
    DemoEnvironment();
    ~DemoEnvironment(); // stops PostgreSQL and removes the directory

    DemoEnvironment(const DemoEnvironment&) = delete;
    DemoEnvironment& operator=(const DemoEnvironment&) = delete;

    // A config for the demo: the reference deployment on these servers.
    Config config() const;
    static constexpr const char* kReceiptTopic = "receipts.demo";
    static constexpr const char* kCallerTopic = "caller-events";
    static constexpr const char* kDatabase = "postgres"; // the simulator may write here

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// SIGINT/SIGTERM only set a flag (demoSignalled); the demo's main thread
// polls it, closes the dashboard, and the destructors clean up.
void recordDemoSignals();
bool demoSignalled();

} // namespace callscope
