#pragma once
// The real PostgreSQL and Kafka that scripts/stack started (found through its
// environment). Each test gets a database and topics of its own.
#include "connectors/config.h"
#include "models/timestamp.h"

#include <functional>
#include <string>

namespace callscope::test {

struct TestStack {
    std::string adminDsn; // the stack's postgres database
    std::string dsn;      // this test's own database
    std::string database; // its name (what the simulator is allowed to write into)
    std::string brokers;
    std::string receiptTopic;
    std::string callerTopic;
    Config config; // points at this test's database and topics

    // A config file for callscope pointing at this test's database and topics,
    // with short detection thresholds; `extra` is appended as written, and
    // `postgresExtra` goes into its [postgres] table (e.g. "enabled = false").
    std::string writeConfig(const std::string& extra = {},
                            const std::string& postgresExtra = {}) const;

    // Creates a fresh database (with the reference schema created by whoever
    // writes first) and names fresh topics. Throws when the stack is not up.
    static TestStack fresh(const std::string& name);
};

// A [probe] over the simulator's business table (effect_missing), its delay
// short enough for tests.
inline constexpr const char* kSimProbe =
    "[probe]\nsql = \"SELECT 1 FROM callscope_sim_orders WHERE order_no = $1\"\n"
    "delay = \"1s\"\nmax_per_second = 1000\n";

// A record table `rec` holding one record 'boom' stuck in PROCESSING for 10
// minutes, and a view `rec_v` over it whose result_snapshot divides by zero
// for that row: reading the snapshot fails in the database, nothing else does.
void createFailingSnapshotView(const std::string& dsn);

// One of the stack's DSNs pointed at another database (same server, credentials).
std::string withDatabase(const std::string& stackDsn, const std::string& db);

// The value of an environment variable the stack exports; throws when unset.
std::string stackEnv(const char* name);

// A path for a temporary file unique to this process.
std::string tempPath(const std::string& name);

// A temporary file removed when the test is done with it.
struct TempFile {
    explicit TempFile(const std::string& name, const std::string& content = {});
    ~TempFile();
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string path;
};

struct CommandResult {
    int exitCode = -1;
    std::string out, err;
};
// Runs a shell command line, capturing stdout and stderr.
CommandResult runCommand(const std::string& commandLine);

// Runs a command that does not end by itself (watch) until its stdout holds
// `count` lines containing `needle`, or `limitSeconds` pass, then sends it
// SIGINT and waits for it: a condition, not a fixed time.
CommandResult runUntil(const std::string& commandLine, const std::string& needle, std::size_t count,
                       int limitSeconds = 60);

std::string readFile(const std::string& path);

// Waits until the wall clock has passed `t` (e.g. the end of the simulated
// data plus a detection threshold): what a later scan judges is then final.
void waitPast(EpochMillis t);

// Waits until `done()` holds, checking every 50 ms for at most `limitMs`;
// returns whether it holds.
bool pollUntil(const std::function<bool()>& done, int limitMs);

// How many times `needle` occurs in `text` (e.g. anomaly lines of --json output).
std::size_t countOf(const std::string& text, const std::string& needle);

// scripts/stack restart-postgres / restart-kafka: an outage and a return.
void restartService(const std::string& which);

// The path of the callscope executable under test.
std::string callscopeBinary();

} // namespace callscope::test
