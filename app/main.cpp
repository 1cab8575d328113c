// callscope: one executable, subcommands of SPEC §4.
#include "app/cli_args.h"
#include "app/gui_command.h"
#include "app/headless_commands.h"
#include "app/report_command.h"
#include "app/sim_command.h"

#include <iostream>
#include <string>
#include <vector>

namespace {

const char* const kUsage = R"(usage: callscope [SUBCOMMAND] [options]

callscope watches retried calls guarded by a callId, a server idempotency
record (PostgreSQL) and business receipts (Kafka).

Subcommands:
  gui       the dashboard (default)         callscope gui [--config FILE]
  scan      detections over a time window   callscope scan --config FILE --since 1h --json
  watch     live detections                 callscope watch --config FILE --json
  inspect   one callId's timeline           callscope inspect CALLID --config FILE
  report    incident report                 callscope report --config FILE ... -o FILE
  demo      dashboard on simulated traffic  callscope demo
  sim       drive PostgreSQL and Kafka      callscope sim --config FILE --duration 30s

Options:
  --config FILE   the TOML config (default $XDG_CONFIG_HOME/callscope/callscope.toml)
  -h, --help      this help; "callscope SUBCOMMAND --help" for one subcommand
  --version       the version

Exit codes: 0 success, 1 runtime failure, 2 bad usage or config.
)";

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> words(argv + 1, argv + argc);
    std::string command = "gui";
    if (!words.empty() && !words[0].empty() && words[0][0] != '-') {
        command = words[0];
        words.erase(words.begin());
    } else if (!words.empty() && (words[0] == "--help" || words[0] == "-h")) {
        std::cout << kUsage;
        return callscope::ExitOk;
    } else if (!words.empty() && words[0] == "--version") {
        std::cout << "callscope 0.1.0\n";
        return callscope::ExitOk;
    }
    if (command == "help") {
        std::cout << kUsage;
        return callscope::ExitOk;
    }
    if (command == "sim")
        return callscope::runSimCommand(std::move(words));
    if (command == "scan")
        return callscope::runScanCommand(std::move(words));
    if (command == "watch")
        return callscope::runWatchCommand(std::move(words));
    if (command == "inspect")
        return callscope::runInspectCommand(std::move(words));
    if (command == "gui")
        return callscope::runGuiCommand(argc, argv, std::move(words));
    if (command == "demo")
        return callscope::runDemoCommand(argc, argv, std::move(words));
    if (command == "report")
        return callscope::runReportCommand(argc, argv, std::move(words));
    std::cerr << "callscope: unknown subcommand \"" << command << "\"\n" << kUsage;
    return callscope::ExitUsage;
}
