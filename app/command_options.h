#pragma once
// What each subcommand takes. The one option table that fills these lives in
// app/command_line.cpp; the commands only act on the values.
#include "connectors/config.h"
#include "models/timestamp.h"
#include "sim/bulk_fill.h"
#include "sim/simulator.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// Exit codes of SPEC §4.
enum ExitCode { ExitOk = 0, ExitRuntime = 1, ExitUsage = 2 };

struct ScanOptions {
    std::optional<std::string> config;
    std::string since;
    std::string until; // empty: now
    bool json = false;
};

struct AdviseOptions {
    std::optional<std::string> config;
    std::string since;
    std::string until; // empty: now
    double safety = 2.0;
    bool json = false;
};

struct WatchOptions {
    std::optional<std::string> config;
    std::string since = "15m";
    bool json = false;
    std::string exec;                // a command per anomaly change, the JSON line on stdin
    int execConcurrency = 4;         // commands running at once
    std::string execTimeout = "10s"; // then its process group is killed
    std::string metrics;             // HOST:PORT: Prometheus metrics served there
};

struct InspectOptions {
    std::optional<std::string> config;
    std::string callId;
    std::string since; // empty: read only the callId (with --group: 2 x key_rotation_window)
    bool json = false;
    bool group = false; // the callId's group on one axis (key rotation, rewritten pair)
};

struct ReportOptions {
    std::optional<std::string> config;
    std::vector<std::string> callIds;
    std::string since, until;
    std::vector<std::string> kinds;
    std::string output;
    bool includePayloads = false;
};

struct GuiOptions {
    std::optional<std::string> config; // none: the last one used, or a file dialog
    std::string since = "15m";
    std::string callId;
};

struct DemoOptions {
    std::string screenshotDir;
    int afterSeconds = 60;
    std::string size = "1400x900"; // the window's size for the screenshots, WxH
};

struct SimCommandOptions {
    std::optional<std::string> config;
    SimOptions sim;
    BulkFillOptions bulk;            // calls > 0: write history at once instead of running traffic
    std::vector<std::string> faults; // KIND=RATE, checked by the option table
};

// The one place a usage error is reported: "callscope CMD: message" and a
// pointer to the subcommand's help; returns ExitUsage.
int usageError(std::string_view command, std::string_view message);

// A time given on the command line: a duration before `now` ("1h") or an
// ISO-8601 time. Every time option goes through this, and every duration
// option through parseDuration (models/duration.h).
std::optional<EpochMillis> parseWhen(const std::string& text, EpochMillis now);

// Loads --config (or the default path when it exists, else built-in defaults).
// Prints the errors and returns nullopt when the file is invalid.
std::optional<Config> loadConfigOrReport(const std::optional<std::string>& path);

// The project's version, from CMake's project(VERSION).
std::string_view callscopeVersion();

} // namespace callscope
