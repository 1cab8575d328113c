// The one option table of every subcommand (CLI11), and the dispatch.
#include "app/command_line.h"

#include "app/check_command.h"
#include "app/command_options.h"
#include "app/gui_command.h"
#include "app/headless_commands.h"
#include "app/report_command.h"
#include "app/sim_command.h"
#include "models/duration.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace callscope {
namespace {

const char* const kDescription =
    "callscope watches retried calls guarded by a callId, a server idempotency record\n"
    "(PostgreSQL) and business receipts (Kafka). Without a subcommand it opens the\n"
    "dashboard (gui).";

const char* const kFooter =
    "\"callscope help SUBCOMMAND\" or \"callscope SUBCOMMAND --help\" describes one\n"
    "subcommand; --help-all describes them all.\n"
    "Config: --config FILE, by default $XDG_CONFIG_HOME/callscope/callscope.toml.\n"
    "Exit codes: 0 success, 1 runtime failure, 2 bad usage or config.";

// The subcommand list shows one line each; a subcommand's own help shows its
// whole description.
class CallscopeFormatter : public CLI::Formatter {
public:
    std::map<std::string, std::string> summaries;
    std::string make_subcommand(const CLI::App* sub) const override {
        std::stringstream out;
        const auto it = summaries.find(sub->get_name());
        CLI::detail::format_help(out, sub->get_name(),
                                 it == summaries.end() ? sub->get_description() : it->second,
                                 get_column_width());
        return out.str();
    }
    std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
        if (mode != CLI::AppFormatMode::All)
            return CLI::Formatter::make_subcommands(app, mode);
        std::string out = "\n";
        for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
            out += make_expanded(sub);
        return out;
    }
    // --help-all (and so the man page, through help2man): a heading per
    // subcommand, its usage, its description and its options.
    std::string make_expanded(const CLI::App* sub) const override {
        std::stringstream out;
        // help2man makes "Heading:" followed at once by indented lines a subsection.
        std::string head =
            make_usage(sub, "callscope " + sub->get_name()) + "\n" + sub->get_description();
        std::string indented = "  ";
        for (const char c : head)
            indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
        out << "Subcommand " << sub->get_name() << ":\n" << indented << "\n\n";
        for (const CLI::Option* opt : sub->get_options())
            if (opt->get_positional())
                out << make_option(opt, true);
        for (const CLI::Option* opt : sub->get_options())
            if (!opt->get_positional() && opt->get_name() != "--help-all")
                out << make_option(opt, false);
        return out.str() + "\n";
    }
};

// A range check whose text stays out of the help (the help says it in words).
CLI::Validator quiet(CLI::Validator v) {
    return v.description("");
}

// Value checks, one per kind of value; they name the option on failure.
CLI::Validator durationValue() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return parseDuration(s) ? std::string()
                                    : "expected a duration such as 500ms, 30s, 5m, 2h or 7d, "
                                      "got \"" +
                                          s + "\"";
        },
        "", "duration");
}

// A window before now; "0s" means live only.
CLI::Validator windowValue() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return s == "0s" || s == "0" || parseDuration(s)
                       ? std::string()
                       : "expected a duration such as 15m, or 0s for live only, got \"" + s + "\"";
        },
        "", "window");
}

CLI::Validator timeValue() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return parseWhen(s, nowMillis()) ? std::string()
                                             : "expected a duration before now such as 1h, or "
                                               "an ISO-8601 time, got \"" +
                                                   s + "\"";
        },
        "", "time");
}

CLI::Validator kindValue() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return anomalyKindFromName(s) ? std::string()
                                          : "unknown kind \"" + s +
                                                "\" (the kinds are listed "
                                                "in the help)";
        },
        "", "kind");
}

std::string kindList() {
    std::string out;
    for (const auto& k : kAnomalyKindNames)
        out += (out.empty() ? "" : " ") + std::string(k);
    return out;
}

// "KIND=RATE" with KIND a detection kind, "callid_regenerated" (a key_rotation
// of that cause) or "all", and RATE in [0, 1].
CLI::Validator faultValue() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            const auto eq = s.find('=');
            if (eq == std::string::npos)
                return "expected KIND=RATE, got \"" + s + "\"";
            const std::string kind = s.substr(0, eq), rate = s.substr(eq + 1);
            if (kind != "all" && kind != "callid_regenerated" && !anomalyKindFromName(kind))
                return "unknown kind \"" + kind + "\" (see callscope help sim)";
            char* end = nullptr;
            const double r = std::strtod(rate.c_str(), &end);
            if (rate.empty() || *end || !(r >= 0.0 && r <= 1.0))
                return "expected a rate from 0 to 1 for " + kind + ", got \"" + rate + "\"";
            return {};
        },
        "", "fault");
}

CLI::Option* addConfig(CLI::App* sub, std::optional<std::string>& target) {
    return sub
        ->add_option_function<std::string>(
            "--config", [&target](const std::string& s) { target = s; },
            "the TOML config (default $XDG_CONFIG_HOME/callscope/callscope.toml)")
        ->type_name("FILE");
}

// A duration option bound to a Millis field, shown with its default.
CLI::Option* addDuration(CLI::App* sub, const std::string& name, Millis& target,
                         const std::string& help) {
    return sub
        ->add_option_function<std::string>(
            name, [&target](const std::string& s) { target = *parseDuration(s); }, help)
        ->check(durationValue())
        ->type_name("D")
        ->default_str(formatDuration(target));
}

// Everything the option table fills, one member per subcommand.
struct Parsed {
    CheckOptions check;
    ScanOptions scan;
    AdviseOptions advise;
    WatchOptions watch;
    InspectOptions inspect;
    ReportOptions report;
    GuiOptions gui;
    DemoOptions demo;
    SimCommandOptions sim;
    std::string helpTopic;
    std::string completionShell;
};

// A subcommand with its one-line summary for the list.
CLI::App* addSubcommand(CLI::App& app, const std::string& name, const std::string& summary) {
    static_cast<CallscopeFormatter*>(app.get_formatter().get())->summaries[name] = summary;
    return app.add_subcommand(name, summary);
}

void defineCheck(CLI::App& app, CheckOptions& o) {
    auto* s = addSubcommand(app, "check", "what the config finds on its sources: run this first");
    s->description(
        "Connects to every configured source and prints what it finds through the config's\n"
        "mapping: tables or views with their mapped columns and row estimates, whether\n"
        "callscope's reads can use an index (and which index is missing), the topics each\n"
        "pattern matches with partitions, sizes and timestamp types, the newest rows and\n"
        "messages decoded (and those that do not fit), and which detections will run.\n"
        "Exit 0: ready (warnings allowed); 1: a source cannot be read; 2: invalid config, or\n"
        "its mapping does not fit the tables.");
    addConfig(s, o.config);
    s->add_option("--sample", o.sample, "rows per table and messages per topic to decode")
        ->check(CLI::Range(0, 1000))
        ->type_name("N")
        ->capture_default_str();
}

// --since (required) and --until: a window read once.
void addWindow(CLI::App* s, std::string& since, std::string& until) {
    s->add_option("--since", since, "start of the window: a duration ago (1h) or an ISO-8601 time")
        ->required()
        ->check(timeValue())
        ->type_name("T");
    s->add_option("--until", until, "end of the window (default now), same forms")
        ->check(timeValue())
        ->type_name("T");
}

void defineScan(CLI::App& app, ScanOptions& o) {
    auto* s = addSubcommand(app, "scan", "detections over a time window, then exit");
    s->description("Reads the window from PostgreSQL and Kafka (seeking by timestamp), runs every\n"
                   "detection, prints the anomalies and a summary, and exits.");
    addConfig(s, o.config);
    addWindow(s, o.since, o.until);
    s->add_flag("--json", o.json, "JSON lines (one anomaly a line, then a summary)");
}

void defineAdvise(CLI::App& app, AdviseOptions& o) {
    auto* s = addSubcommand(app, "advise", "window and timeouts from measured tails, then exit");
    s->description(
        "Reads the window like scan and measures what the protocol's parameters must outlast:\n"
        "processing (an executed attempt, arrived to finished), retry delay (a callId's first\n"
        "attempt to each later one), receipt delay (record terminal to its first terminal\n"
        "receipt) and confirmation delay (caller AWAITING_RESPONSE to CONFIRMED_*), with the\n"
        "windows the records were given. Recommends, with the arithmetic: the idempotency\n"
        "window, the stale-PROCESSING timeout and the receipt redelivery budget, and lists the\n"
        "callIds retried after or within 10% of their record's expiry.");
    addConfig(s, o.config);
    addWindow(s, o.since, o.until);
    s->add_option("--safety", o.safety, "the window's and receipt budget's margin over the tail")
        ->check(CLI::Range(1.0, 100.0))
        ->type_name("X")
        ->capture_default_str();
    s->add_flag("--json", o.json, "one JSON object ({\"type\":\"advice\", ...})");
}

void defineWatch(CLI::App& app, WatchOptions& o) {
    auto* s = addSubcommand(app, "watch", "live detections until Ctrl+C");
    s->description("Follows PostgreSQL and Kafka live and prints every anomaly when it opens,\n"
                   "changes or resolves; source health changes go to stderr. Ctrl+C stops.");
    addConfig(s, o.config);
    s->add_option("--since", o.since,
                  "also judge what happened since then: a duration ago or a time")
        ->check(timeValue())
        ->type_name("T")
        ->capture_default_str();
    s->add_flag("--json", o.json, "JSON lines with \"change\" first");
    s->add_option("--metrics", o.metrics,
                  "serve Prometheus metrics at http://HOST:PORT/metrics (\":9464\": every "
                  "address)")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                const auto colon = v.rfind(':');
                const std::string port = colon == std::string::npos ? "" : v.substr(colon + 1);
                const bool ok = !port.empty() && port.size() <= 5 &&
                                port.find_first_not_of("0123456789") == std::string::npos &&
                                std::stoi(port) <= 65535;
                return ok ? std::string() : "expected HOST:PORT such as 127.0.0.1:9464";
            },
            "", "address"))
        ->type_name("HOST:PORT");
    s->add_option("--exec", o.exec,
                  "run CMD (with /bin/sh) per anomaly change while following (not for the "
                  "--since window's), its JSON line on stdin and CALLSCOPE_CHANGE, "
                  "CALLSCOPE_KIND, CALLSCOPE_SEVERITY set; its output goes to stderr")
        ->type_name("CMD");
    s->add_option("--exec-concurrency", o.execConcurrency, "--exec commands running at once")
        ->check(CLI::Range(1, 64))
        ->type_name("N")
        ->capture_default_str();
    s->add_option("--exec-timeout", o.execTimeout,
                  "an --exec command still running after this is killed (its process group)")
        ->check(durationValue())
        ->type_name("D")
        ->capture_default_str();
}

void defineInspect(CLI::App& app, InspectOptions& o) {
    auto* s = addSubcommand(app, "inspect", "one callId's timeline and diagnosis");
    s->description(
        "Prints one callId's merged timeline (server record and caller view, attempts,\n"
        "receipts), its anomalies and the diagnosis. A callId not in the window is read\n"
        "by key, and from the one partition per topic its key hashes to.");
    s->add_option("callId", o.callId, "the callId to inspect")->required()->type_name("CALLID");
    addConfig(s, o.config);
    s->add_option("--since", o.since,
                  "load this window first (finds key-rotation siblings by bizNo)")
        ->check(timeValue())
        ->type_name("T");
    s->add_flag("--json", o.json, "one JSON object instead of text");
    s->add_flag("--group", o.group,
                "the callId's group instead: its key-rotation siblings or the other name of a "
                "rewritten callId, each with its timeline, timeouts and executions on one axis "
                "(loads 2 x key_rotation_window unless --since says otherwise)");
}

void defineReport(CLI::App& app, ReportOptions& o) {
    auto* s = addSubcommand(app, "report", "incident report as PDF, HTML or JSON");
    s->description(
        "An incident report: window, sources, counts by kind and severity, the anomaly table,\n"
        "and per callId its two-lane timeline, record, attempts, receipts, caller events and\n"
        "diagnosis. Give either --call-id (repeatable) or --since. The format follows the\n"
        "extension of -o; result_snapshot is redacted unless --include-payloads.");
    addConfig(s, o.config);
    s->add_option("--call-id", o.callIds, "a callId to report on (repeatable)")
        ->type_name("ID")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    s->add_option("--since", o.since, "report every anomaly since then: a duration ago or a time")
        ->check(timeValue())
        ->type_name("T");
    s->add_option("--until", o.until, "end of that window (default now)")
        ->check(timeValue())
        ->type_name("T");
    s->add_option("--kind", o.kinds, "only anomalies of this kind (repeatable)")
        ->check(kindValue())
        ->type_name("KIND")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    s->add_option("-o,--output", o.output, "the report file: .pdf, .html or .json")
        ->required()
        ->type_name("FILE");
    s->add_flag("--include-payloads", o.includePayloads, "include result_snapshot unredacted");
    s->footer("Kinds: " + kindList());
}

void defineGui(CLI::App& app, GuiOptions& o) {
    auto* s = addSubcommand(app, "gui", "the dashboard (the default)");
    s->description("Opens the dashboard on the config's PostgreSQL and Kafka. Without --config it\n"
                   "opens the config used last, or asks for one.");
    addConfig(s, o.config);
    s->add_option("--since", o.since, "the window to load first; 0s for live only")
        ->check(windowValue())
        ->type_name("D")
        ->capture_default_str();
    s->add_option("--call-id", o.callId, "open this callId (or bizNo) in the drill-down")
        ->type_name("ID");
}

void defineDemo(CLI::App& app, DemoOptions& o) {
    auto* s = addSubcommand(app, "demo", "the dashboard on simulated traffic, needing nothing");
    s->description(
        "Starts a throwaway PostgreSQL and an in-process Kafka (librdkafka's mock cluster),\n"
        "runs the simulator with every anomaly kind injected, and opens the dashboard on it.\n"
        "Everything is removed on exit.");
    s->add_option("--screenshot", o.screenshotDir,
                  "write overview, anomalies, drilldown and instances PNGs here, then exit")
        ->type_name("DIR");
    s->add_option("--after", o.afterSeconds, "seconds of traffic before the screenshots")
        ->check(quiet(CLI::Range(1, 3600)))
        ->type_name("S")
        ->capture_default_str();
    s->add_option("--size", o.size, "the window's size for the screenshots, e.g. 1024x700")
        ->check(CLI::Validator(
            [](const std::string& v) {
                int w = 0, h = 0;
                char x = 0;
                const bool ok = std::sscanf(v.c_str(), "%d%c%d", &w, &x, &h) == 3 && x == 'x' &&
                                w >= 640 && w <= 7680 && h >= 480 && h <= 4320;
                return ok ? std::string()
                          : std::string("--size: WxH, from 640x480 to 7680x4320, e.g. 1024x700");
            },
            "WxH"))
        ->type_name("WxH")
        ->capture_default_str();
}

void defineSim(CLI::App& app, SimCommandOptions& o) {
    auto* s = addSubcommand(app, "sim", "drive PostgreSQL and Kafka with simulated traffic");
    s->description("Drives the PostgreSQL and Kafka of the config with simulated callers and\n"
                   "servers that follow the callId / idempotency record / receipt protocol.");
    SimOptions& sim = o.sim;
    addConfig(s, o.config);
    s->add_option("--allow-writes", sim.allowWritesTo,
                  "required: the database the config's DSN connects to, which sim may write "
                  "into (it refuses any other, and tables and topics it did not create)")
        ->type_name("DBNAME");
    addDuration(s, "--duration", sim.duration, "how long new business actions start");
    s->add_option("--rate", sim.rate, "new business actions per second over all callers")
        ->check(quiet(CLI::PositiveNumber & CLI::Range(0.0, 100000.0)))
        ->type_name("N")
        ->capture_default_str();
    s->add_option("--seed", sim.seed, "random seed")->type_name("N")->capture_default_str();
    for (auto [name, field, help] :
         {std::tuple{"--callers", &sim.callers, "caller instances order-api-1..N"},
          std::tuple{"--servers", &sim.servers, "server instances pay-svc-1..N"},
          std::tuple{"--workers", &sim.workersPerServer, "request workers per server"},
          std::tuple{"--partitions", &sim.partitions,
                     "partitions of topics the simulator creates"}})
        s->add_option(name, *field, help)
            ->check(quiet(CLI::Range(1, 100000)))
            ->type_name("N")
            ->capture_default_str();
    s->add_option("--fault", o.faults,
                  "inject KIND (a detection kind, callid_regenerated: a key_rotation with no "
                  "timeout, or all) into RATE (0..1) of the business actions; repeatable")
        ->check(faultValue())
        ->type_name("KIND=RATE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    s->add_option("--crash-rate", sim.crashRate,
                  "healthy crashes: a server dies after its placeholder, a retry re-occupies it")
        ->check(quiet(CLI::Range(0.0, 1.0)))
        ->type_name("R")
        ->capture_default_str();
    s->add_option("--truth", sim.truthPath, "write the injected anomalies as JSON lines")
        ->type_name("FILE");
    s->add_option("--receipt-topic", sim.receiptTopic, "receipt topic to write")
        ->type_name("T")
        ->capture_default_str();
    s->add_option("--caller-topic", sim.callerTopic,
                  "caller event topic (default the config's kafka.caller_topics)")
        ->type_name("T");
    addDuration(s, "--request-timeout", sim.requestTimeout, "the callers' request timeout");
    addDuration(s, "--stale-timeout", sim.staleTimeout, "the servers' stale PROCESSING timeout");
    addDuration(s, "--record-ttl", sim.recordTtl, "the idempotency window, expire_at - created_at");
    addDuration(s, "--drain-timeout", sim.drainTimeout,
                "how long to wait for open calls at the end");
    s->add_option("--work-scale", sim.workScale,
                  "scale the servers' simulated work, e.g. 0.02 for bulk data")
        ->check(quiet(CLI::Range(0.0, 100.0)))
        ->type_name("F")
        ->capture_default_str();
    s->add_option("--bulk-calls", o.bulk.calls,
                  "write N finished calls of history at once (COPY and timestamped messages) "
                  "instead of running traffic; injects key_rotation only")
        ->check(quiet(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000})))
        ->type_name("N");
    addDuration(s, "--bulk-span", o.bulk.span,
                "--bulk-calls: the calls start over this span, ending 5 minutes ago");
    s->footer("Fault kinds: " + kindList());
}

// Builds the whole table. The App keeps pointers into `p`.
void defineCommandLine(CLI::App& app, Parsed& p) {
    app.description(kDescription);
    app.footer(kFooter);
    app.set_version_flag("--version", "callscope " + std::string(callscopeVersion()));
    app.set_help_all_flag("--help-all", "describe every subcommand and its options");
    app.require_subcommand(0, 1);
    app.formatter(std::make_shared<CallscopeFormatter>());
    app.get_formatter()->column_width(28);
    defineGui(app, p.gui);
    defineCheck(app, p.check);
    defineScan(app, p.scan);
    defineAdvise(app, p.advise);
    defineWatch(app, p.watch);
    defineInspect(app, p.inspect);
    defineReport(app, p.report);
    defineDemo(app, p.demo);
    defineSim(app, p.sim);
    auto* help = addSubcommand(app, "help", "describe a subcommand");
    help->add_option("subcommand", p.helpTopic, "the subcommand")->type_name("SUBCOMMAND");
    auto* completion = addSubcommand(app, "completion", "print a shell completion script");
    completion->add_option("shell", p.completionShell, "the shell (bash)")
        ->required()
        ->check(quiet(CLI::IsMember({"bash"})))
        ->type_name("SHELL");
}

// What completes an option's value, from its type name.
std::string valueCompletion(const CLI::Option* opt) {
    const std::string t = opt->get_type_name();
    if (t == "FILE")
        return "mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); compopt -o filenames";
    if (t == "DIR")
        return "mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"); compopt -o filenames";
    if (t == "KIND")
        return "mapfile -t COMPREPLY < <(compgen -W \"" + kindList() + "\" -- \"$cur\")";
    if (t == "KIND=RATE") {
        std::string words = "all= callid_regenerated=";
        for (const auto& k : kAnomalyKindNames)
            words += " " + std::string(k) + "=";
        return "mapfile -t COMPREPLY < <(compgen -W \"" + words +
               "\" -- \"$cur\"); compopt -o nospace";
    }
    return "COMPREPLY=()";
}

// A bash completion script made from the option table, so it never drifts.
std::string bashCompletion(const CLI::App& app) {
    std::string subs, options, values, positionals;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        const std::string name = sub->get_name();
        subs += (subs.empty() ? "" : " ") + name;
        std::string words = "--help";
        for (const CLI::Option* opt : sub->get_options()) {
            if (opt->get_positional())
                continue;
            for (const auto& l : opt->get_lnames())
                if (l != "help")
                    words += " --" + l;
            for (const auto& s : opt->get_snames())
                if (s != "h")
                    words += " -" + s;
            if (opt->get_type_size_max() > 0) {
                std::string names;
                for (const auto& l : opt->get_lnames())
                    names += (names.empty() ? "" : "|") + name + ":--" + l;
                for (const auto& s : opt->get_snames())
                    names += (names.empty() ? "" : "|") + name + ":-" + s;
                values += "        " + names + ")\n            " + valueCompletion(opt) +
                          "\n            return ;;\n";
            }
        }
        options += "        " + name + ") words=\"" + words + "\" ;;\n";
    }
    return "# bash completion for callscope; generated by `callscope completion bash` from the\n"
           "# program's own option table.\n"
           "_callscope() {\n"
           "    local cur prev sub words i\n"
           "    cur=${COMP_WORDS[COMP_CWORD]}\n"
           "    prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
           "    sub=\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
           "        case ${COMP_WORDS[i]} in\n"
           "            " +
           [&] {
               std::string alt = subs;
               std::replace(alt.begin(), alt.end(), ' ', '|');
               return alt;
           }() +
           ") sub=${COMP_WORDS[i]}; break ;;\n"
           "        esac\n"
           "    done\n"
           "    case \"$sub:$prev\" in\n" +
           values +
           "    esac\n"
           "    case $sub in\n"
           "        \"\") words=\"" +
           subs +
           " --help --help-all --version\" ;;\n"
           "        help) words=\"" +
           subs +
           "\" ;;\n"
           "        completion) words=\"bash\" ;;\n" +
           options +
           "    esac\n"
           "    mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
           "}\n"
           "complete -F _callscope callscope\n";
}

bool isSubcommand(const CLI::App& app, const std::string& word) {
    return std::ranges::any_of(app.get_subcommands([](const CLI::App*) { return true; }),
                               [&](const CLI::App* s) { return s->get_name() == word; });
}

} // namespace

int runCommandLine(int argc, char** argv) {
    CLI::App app("", "callscope");
    Parsed p;
    defineCommandLine(app, p);

    std::vector<std::string> words(argv + 1, argv + argc);
    if (!words.empty() && !words[0].empty() && words[0][0] != '-' && !isSubcommand(app, words[0]))
        return usageError("", "unknown subcommand \"" + words[0] + "\"");
    // Without a subcommand, the options are the dashboard's.
    const bool topLevel = !words.empty() && (words[0] == "-h" || words[0] == "--help" ||
                                             words[0] == "--help-all" || words[0] == "--version");
    if (!topLevel && (words.empty() || words[0].empty() || words[0][0] == '-'))
        words.insert(words.begin(), "gui");
    std::reverse(words.begin(), words.end()); // CLI11 takes them last first
    try {
        app.parse(words);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0)
            return app.exit(e); // --help, --help-all, --version: to stdout, exit 0
        const auto chosen = app.get_subcommands();
        return usageError(chosen.empty() ? "" : chosen.front()->get_name(), e.what());
    }

    const auto parsed = [&](const char* name) { return app.get_subcommand(name)->parsed(); };
    if (parsed("help")) {
        if (p.helpTopic.empty()) {
            std::cout << app.help();
            return ExitOk;
        }
        if (!isSubcommand(app, p.helpTopic) || p.helpTopic == "help")
            return usageError("help", "unknown subcommand \"" + p.helpTopic + "\"");
        std::cout << app.get_subcommand(p.helpTopic)->help("callscope");
        return ExitOk;
    }
    if (parsed("completion")) {
        std::cout << bashCompletion(app);
        return ExitOk;
    }
    if (parsed("check"))
        return runCheckCommand(p.check);
    if (parsed("scan"))
        return runScanCommand(p.scan);
    if (parsed("advise"))
        return runAdviseCommand(p.advise);
    if (parsed("watch"))
        return runWatchCommand(p.watch);
    if (parsed("inspect"))
        return runInspectCommand(p.inspect);
    if (parsed("report"))
        return runReportCommand(argc, argv, p.report);
    if (parsed("demo"))
        return runDemoCommand(argc, argv, p.demo);
    if (parsed("sim"))
        return runSimCommand(p.sim);
    return runGuiCommand(argc, argv, p.gui);
}

} // namespace callscope
