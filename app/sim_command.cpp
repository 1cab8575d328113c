#include "app/sim_command.h"

#include "app/cli_args.h"
#include "connectors/simulator.h"

#include <csignal>
#include <cstdlib>
#include <iostream>

namespace callscope {

const char* const kSimUsage = R"(usage: callscope sim [--config FILE] [options]

Drives the PostgreSQL and Kafka of the config with simulated callers and
servers that follow the callId / idempotency record / receipt protocol.

  --duration D          how long new business actions start (default 30s)
  --rate N              new business actions per second over all callers (20)
  --seed N              random seed (1)
  --callers N           caller instances order-api-1..N (3)
  --servers N           server instances pay-svc-1..N (2)
  --workers N           request workers per server (6)
  --fault KIND=RATE     inject KIND into RATE (0..1) of the business actions;
                        KIND is a detection kind or "all"; repeatable
  --crash-rate R        healthy crashes: a server dies after its placeholder
                        and a retry re-occupies the stale record (0)
  --truth FILE          write the injected anomalies as JSON lines
  --receipt-topic T     receipt topic to write (receipts.sim)
  --caller-topic T      caller event topic (the config's kafka.caller_topics)
  --partitions N        partitions of topics the simulator creates (4)
  --request-timeout D   the callers' request timeout (250ms)
  --stale-timeout D     the servers' stale PROCESSING timeout (2s)
  --record-ttl D        the idempotency window, expire_at - created_at (24h)
  --drain-timeout D     how long to wait for open calls at the end (30s)
  --work-scale F        scale the servers' simulated work, e.g. 0.02 for bulk data (1)

Fault kinds: stuck_processing digest_conflict duplicate_caller key_rotation
concurrent_execution expired_replay receipt_missing state_mismatch
receipt_regression caller_stuck orphan_receipt
)";

namespace {

std::atomic<bool> g_stop{false};
extern "C" void onSignal(int) { g_stop = true; }

bool parseCount(const std::optional<std::string>& v, const char* name, int& out,
                std::string& error) {
    if (!v)
        return true;
    char* end = nullptr;
    const long n = std::strtol(v->c_str(), &end, 10);
    if (v->empty() || *end || n < 1 || n > 100000) {
        error = std::string(name) + ": expected a whole number from 1 to 100000, got \"" + *v + "\"";
        return false;
    }
    out = static_cast<int>(n);
    return true;
}

bool parseRate(const std::string& text, const std::string& what, double& out, std::string& error) {
    char* end = nullptr;
    const double r = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !(r >= 0.0 && r <= 1.0)) {
        error = what + ": expected a rate from 0 to 1, got \"" + text + "\"";
        return false;
    }
    out = r;
    return true;
}

bool parseDurationOption(const std::optional<std::string>& v, const char* name, Millis& out,
                         std::string& error) {
    if (!v)
        return true;
    auto d = parseDuration(*v);
    if (!d) {
        error = std::string(name) + ": expected a duration such as 500ms, 30s, 5m, got \"" + *v + "\"";
        return false;
    }
    out = *d;
    return true;
}

} // namespace

int runSimCommand(std::vector<std::string> words) {
    CliArgs args(std::move(words));
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << kSimUsage;
        return ExitOk;
    }
    SimOptions opt;
    std::string error;
    const auto configPath = args.value("--config");
    bool ok = parseDurationOption(args.value("--duration"), "--duration", opt.duration, error) &&
              parseCount(args.value("--callers"), "--callers", opt.callers, error) &&
              parseCount(args.value("--servers"), "--servers", opt.servers, error) &&
              parseCount(args.value("--workers"), "--workers", opt.workersPerServer, error) &&
              parseCount(args.value("--partitions"), "--partitions", opt.partitions, error) &&
              parseDurationOption(args.value("--request-timeout"), "--request-timeout",
                                  opt.requestTimeout, error) &&
              parseDurationOption(args.value("--stale-timeout"), "--stale-timeout",
                                  opt.staleTimeout, error) &&
              parseDurationOption(args.value("--record-ttl"), "--record-ttl", opt.recordTtl,
                                  error) &&
              parseDurationOption(args.value("--drain-timeout"), "--drain-timeout",
                                  opt.drainTimeout, error);
    if (ok) {
        if (auto v = args.value("--rate")) {
            char* end = nullptr;
            opt.rate = std::strtod(v->c_str(), &end);
            if (v->empty() || *end || !(opt.rate > 0 && opt.rate <= 100000)) {
                error = "--rate: expected actions per second, more than 0, got \"" + *v + "\"";
                ok = false;
            }
        }
    }
    if (ok) {
        if (auto v = args.value("--seed")) {
            char* end = nullptr;
            opt.seed = std::strtoull(v->c_str(), &end, 10);
            if (v->empty() || *end) {
                error = "--seed: expected a whole number, got \"" + *v + "\"";
                ok = false;
            }
        }
    }
    if (ok) {
        if (auto v = args.value("--work-scale")) {
            char* end = nullptr;
            opt.workScale = std::strtod(v->c_str(), &end);
            if (v->empty() || *end || !(opt.workScale >= 0 && opt.workScale <= 100)) {
                error = "--work-scale: expected a factor from 0 to 100, got \"" + *v + "\"";
                ok = false;
            }
        }
    }
    if (ok)
        if (auto v = args.value("--crash-rate"))
            ok = parseRate(*v, "--crash-rate", opt.crashRate, error);
    for (const auto& f : args.values("--fault")) {
        if (!ok)
            break;
        const auto eq = f.find('=');
        if (eq == std::string::npos) {
            error = "--fault: expected KIND=RATE, got \"" + f + "\"";
            ok = false;
            break;
        }
        const std::string kind = f.substr(0, eq);
        double rate = 0;
        if (!(ok = parseRate(f.substr(eq + 1), "--fault " + kind, rate, error)))
            break;
        if (kind == "all") {
            for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
                opt.faults[static_cast<AnomalyKind>(i)] = rate;
        } else if (auto k = anomalyKindFromName(kind)) {
            opt.faults[*k] = rate;
        } else {
            error = "--fault: unknown kind \"" + kind + "\" (see callscope sim --help)";
            ok = false;
        }
    }
    double total = 0;
    for (const auto& [k, r] : opt.faults)
        total += r;
    if (ok && total + opt.crashRate > 1.0) {
        error = "--fault: the rates add up to more than 1";
        ok = false;
    }
    if (auto v = args.value("--truth"))
        opt.truthPath = *v;
    if (auto v = args.value("--receipt-topic"))
        opt.receiptTopic = *v;
    if (auto v = args.value("--caller-topic"))
        opt.callerTopic = *v;
    if (ok && !args.finish(error))
        ok = false;
    if (!ok) {
        std::cerr << "callscope sim: " << error << "\n(callscope sim --help lists the options)\n";
        return ExitUsage;
    }
    const auto config = loadConfigOrReport(configPath);
    if (!config)
        return ExitUsage;

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::cerr << "callscope sim: " << opt.rate << " actions/s for " << formatDuration(opt.duration)
              << " against " << redactDsn(config->postgres.dsn) << " and "
              << config->kafka.brokers << '\n';
    const SimResult r = runSimulation(*config, opt, &g_stop);
    if (!r.ok) {
        std::cerr << "callscope sim: " << r.error << '\n';
        return ExitRuntime;
    }
    std::cout << toJsonLine(r.stats) << std::endl;
    return ExitOk;
}

} // namespace callscope
