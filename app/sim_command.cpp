#include "app/sim_command.h"

#include "app/command_options.h"
#include "connectors/secrets.h"
#include "models/visible_text.h"
#include "sim/bulk_fill.h"
#include "sim/simulator.h"

#include <csignal>
#include <cstdlib>
#include <iostream>

namespace callscope {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void onSignal(int) {
    g_stop = true;
}

} // namespace

int runSimCommand(const SimCommandOptions& options) {
    SimOptions opt = options.sim;
    // Each --fault was checked as KIND=RATE by the option table.
    for (const auto& f : options.faults) {
        const auto eq = f.find('=');
        const std::string kind = f.substr(0, eq);
        const double rate = std::strtod(f.c_str() + eq + 1, nullptr);
        if (kind == "all") {
            for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
                opt.faults[static_cast<AnomalyKind>(i)] = rate;
            opt.regeneratedRate = rate;
        } else if (kind == "callid_regenerated") {
            opt.regeneratedRate = rate;
        } else {
            opt.faults[*anomalyKindFromName(kind)] = rate;
        }
    }
    double total = opt.crashRate + opt.regeneratedRate;
    for (const auto& [k, r] : opt.faults)
        total += r;
    if (total > 1.0)
        return usageError("sim", "--fault: the rates (with --crash-rate) add up to more than 1");
    const auto config = loadConfigOrReport(options.config);
    if (!config)
        return ExitUsage;

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    const bool bulk = options.bulk.calls > 0;
    if (bulk)
        std::cerr << "callscope sim: " << options.bulk.calls << " calls of history over "
                  << formatDuration(options.bulk.span);
    else
        std::cerr << "callscope sim: " << opt.rate << " actions/s for "
                  << formatDuration(opt.duration);
    std::cerr << " against " << redactDsn(config->postgres.dsn) << " and " << config->kafka.brokers
              << '\n';
    const SimResult r = bulk ? runBulkFill(*config, opt, options.bulk, &g_stop)
                             : runSimulation(*config, opt, &g_stop);
    if (!r.ok) {
        std::cerr << "callscope sim: " << visibleText(r.error) << '\n';
        return r.refused ? ExitUsage : ExitRuntime;
    }
    std::cout << toJsonLine(r.stats) << std::endl;
    return ExitOk;
}

} // namespace callscope
