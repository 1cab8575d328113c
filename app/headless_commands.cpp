// scan, watch and inspect (SPEC §4.2): the headless surfaces.
#include "app/headless_commands.h"

#include "app/command_options.h"
#include "app/exec_runner.h"
#include "app/metrics.h"
#include "app/monitor.h"
#include "models/advice.h"
#include "models/backoff.h"
#include "models/call_group.h"
#include "models/call_json.h"
#include "models/diagnosis.h"
#include "models/duration.h"
#include "models/timeline.h"
#include "models/visible_text.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

namespace callscope {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void onStopSignal(int) {
    if (g_stop) // a second Ctrl+C: stop now, whatever is still draining
        std::_Exit(130);
    g_stop = true;
}

int sourceError(const std::string& command, const SourceError& e) {
    std::cerr << "callscope " << command << ": " << visibleText(e.what()) << '\n';
    return e.configError ? ExitUsage : ExitRuntime;
}

void printGaps(const GapStats& g) {
    if (g.lost() == 0)
        return;
    std::cerr << "callscope: " << g.lost()
              << " messages were deleted by retention before they were read:";
    for (const auto& [where, n] : g.lostByPartition)
        std::cerr << ' ' << visibleText(where) << " (" << n << ")";
    std::cerr << '\n';
}

// Digests and bizNos too widely shared to be a business action (SPEC §3
// key_rotation): reported once, never grouped.
void printPlaceholders(const std::vector<std::string>& list) {
    for (const auto& p : list)
        std::cerr << "callscope: data quality: " << visibleText(p) << '\n';
}

void printRejects(const RejectStats& r) {
    if (r.total() == 0)
        return;
    std::cerr << "callscope: " << r.total() << " messages or rows were rejected and skipped:";
    for (const auto& [reason, n] : r.byReason)
        std::cerr << ' ' << visibleText(reason) << " (" << n << ")";
    std::cerr << '\n';
    int printed = 0;
    for (const Rejection& x : r.samples) {
        if (++printed > 5)
            break;
        std::cerr << "  " << visibleText(x.where) << ": " << visibleText(x.reason) << ": "
                  << visibleText(x.sample) << '\n';
    }
}

std::string summaryLine(const Monitor& m) {
    const CallStore& s = m.store();
    // Calls released while the window loaded were read and judged too (a
    // call that came back after it left is counted once).
    std::int64_t records = m.evictions().releasedWithRecord, calls = m.evictions().released;
    for (std::uint32_t i = 0; i < s.size(); ++i)
        if (!(s.call(i).flags & Reported)) {
            calls++;
            records += s.call(i).hasRecord();
        }
    std::map<std::string, int> byKind;
    for (const Anomaly& a : m.engine().anomalies())
        if (a.open)
            byKind[std::string(toString(a.kind))]++;
    const StoreCounters& c = s.counters();
    JsonWriter w;
    w.object()
        .field("type", "summary")
        .field("calls", calls)
        .field("records", records)
        .field("attempts", c.attempts)
        .field("receipts", c.receipts)
        .field("callerEvents", c.callerEvents)
        .field("duplicateReceipts", c.duplicateReceipts)
        .field("outOfOrderReceipts", c.outOfOrderReceipts)
        .field("rejectedMessages", m.rejects().total());
    w.key("rejected").object();
    for (const auto& [reason, n] : m.rejects().byReason)
        w.field(reason, n);
    w.end().field("lostMessages", m.gaps().lost());
    w.key("gaps").object();
    for (const auto& [where, n] : m.gaps().lostByPartition)
        w.field(where, n);
    w.end().key("placeholders").strings(m.engine().placeholders());
    w.field("releasedCalls", m.evictions().released)
        .field("evictedCalls", m.evictions().total)
        .field("evictedOverBudget", m.evictions().overBudget)
        .field("forgottenAnomalies", m.evictions().anomalies)
        .field("storeBytes", s.memoryBytes() + m.engine().memoryBytes());
    if (m.probes()) {
        const ProbeStats p = m.probeStats();
        w.key("probe")
            .object()
            .field("asked", p.asked)
            .field("missing", p.missing)
            .field("failed", p.failed);
        if (p.skipped > 0)
            w.field("skipped", p.skipped);
        w.end();
    }
    w.key("detectionsOff").object();
    for (const auto& [kind, why] : detectionsOff(m.engine().sources()))
        w.field(toString(kind), why);
    if (m.probes()) {
        const ProbeStats p = m.probeStats();
        if (p.asked > 0 && p.failed == p.asked) // configured, but it judged nothing
            w.field(toString(AnomalyKind::EffectMissing),
                    "every business-effect probe failed: " + p.lastError);
    }
    w.end().key("anomalies").object();
    for (const auto& [kind, n] : byKind)
        w.field(kind, n);
    return w.end().end().take();
}

std::string readableAnomaly(const Anomaly& a) {
    std::string ids;
    for (const auto& id : a.callIds)
        ids += (ids.empty() ? "" : ", ") + visibleText(id);
    std::string out = "[" + std::string(toString(a.severity)) + "] " +
                      std::string(toString(a.kind)) + (a.open ? "" : " (resolved)") + "  " + ids +
                      "\n    " + visibleText(summaryAt(a, nowMillis())) + "\n    first event " +
                      formatIsoMillis(a.firstEventAt);
    if (!a.instances.empty()) {
        out += "; instances";
        for (const auto& i : a.instances)
            out += " " + visibleText(i);
    }
    for (const Evidence& e : a.evidence)
        out += "\n      " + formatIsoMillis(e.at) + "  " + visibleText(e.callId) + "  " +
               visibleText(e.what);
    return out;
}

bool severer(const Anomaly* a, const Anomaly* b) {
    return moreSevere(*a, *b);
}

} // namespace

void printDetectionsOff(const char* command, const DetectionSources& sources) {
    const auto off = detectionsOff(sources);
    if (off.empty())
        return;
    std::cerr << "callscope " << command << ": detections off:";
    const char* sep = " ";
    for (const auto& [kind, why] : off) {
        std::cerr << sep << toString(kind) << " (" << why << ")";
        sep = ", ";
    }
    std::cerr << '\n';
}

void printSourceFacts(const char* command, Monitor& m, bool detections) {
    for (const SourceHealth& h : m.healthChanges())
        if (!h.note.empty())
            std::cerr << "callscope " << command << ": " << visibleText(h.source) << ": "
                      << visibleText(h.note) << '\n';
    if (m.probes()) {
        const ProbeStats p = m.probeStats();
        std::cerr << "callscope " << command << ": business-effect probe: " << p.asked << " asked, "
                  << p.missing << " without a row, " << p.failed << " failed"
                  << (p.skipped > 0 ? ", " + std::to_string(p.skipped) + " skipped (queue full)"
                                    : std::string())
                  << (p.lastError.empty() ? std::string() : " (" + visibleText(p.lastError) + ")")
                  << '\n';
        if (p.asked > 0 && p.failed == p.asked)
            std::cerr << "callscope " << command
                      << ": effect_missing was not judged: every business-effect probe failed "
                         "(callscope check shows why)\n";
    }
    if (detections)
        printDetectionsOff(command, m.engine().sources());
}

namespace {
// A command over a window read once (scan, advise): the window and the
// config checked, Ctrl+C cancelling the read. 0, or the exit code.
int prepareWindowCommand(const char* command, const std::string& sinceText,
                         const std::string& untilText, const std::optional<std::string>& path,
                         EpochMillis& since, EpochMillis& until, std::optional<Config>& config) {
    const EpochMillis now = nowMillis();
    // The option table has checked both forms already.
    const auto from = parseWhen(sinceText, now);
    const auto to = untilText.empty() ? std::optional(now) : parseWhen(untilText, now);
    if (!from || !to || *from >= *to)
        return usageError(command, "--since must be before --until");
    config = loadConfigOrReport(path);
    if (!config)
        return ExitUsage;
    since = *from;
    until = *to;
    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    return ExitOk;
}

// Reads the window (Ctrl+C cancels) and says on stderr what the sources
// told; 0, or the exit code.
int loadWindowOrReport(const char* command, Monitor& monitor, EpochMillis since, EpochMillis until,
                       bool detections = true) {
    try {
        monitor.connect();
        monitor.loadWindow(since, until, g_stop);
    } catch (const SourceError& e) {
        return sourceError(command, e);
    }
    if (g_stop) {
        std::cerr << "callscope " << command << ": cancelled\n";
        return ExitRuntime;
    }
    printSourceFacts(command, monitor, detections);
    return ExitOk;
}
} // namespace

int runScanCommand(const ScanOptions& options) {
    const bool json = options.json;
    EpochMillis since = 0, until = 0;
    std::optional<Config> config;
    if (const int refused = prepareWindowCommand("scan", options.since, options.until,
                                                 options.config, since, until, config))
        return refused;
    Monitor monitor(*config);
    if (const int failed = loadWindowOrReport("scan", monitor, since, until))
        return failed;
    std::vector<const Anomaly*> list;
    for (const Anomaly& a : monitor.engine().anomalies())
        if (a.open)
            list.push_back(&a);
    std::sort(list.begin(), list.end(), severer);
    for (const Anomaly* a : list)
        std::cout << (json ? toJsonLine(*a) : readableAnomaly(*a)) << '\n';
    if (json) {
        std::cout << summaryLine(monitor) << '\n';
    } else {
        std::cout << (list.empty() ? "no anomalies" : std::to_string(list.size()) + " anomalies")
                  << " in " << formatIsoMillis(since) << " .. " << formatIsoMillis(until) << "\n"
                  << summaryLine(monitor) << '\n';
    }
    printRejects(monitor.rejects());
    printGaps(monitor.gaps());
    printPlaceholders(monitor.engine().placeholders());
    std::cout.flush();
    return ExitOk;
}

int runAdviseCommand(const AdviseOptions& options) {
    EpochMillis since = 0, until = 0;
    std::optional<Config> config;
    if (const int refused = prepareWindowCommand("advise", options.since, options.until,
                                                 options.config, since, until, config))
        return refused;
    Config measuring = *config;
    measuring.probe.sql.clear(); // the business-effect probe tells nothing about tails
    Monitor monitor(measuring);
    AdviceCollector collector;
    // Calls measured as they leave memory while the window loads, and the rest at the end.
    monitor.setReleaseObserver([&](std::uint32_t i) { collector.addCall(monitor.store(), i); });
    // (advise judges nothing: no word of detections that are off)
    if (const int failed = loadWindowOrReport("advise", monitor, since, until, false))
        return failed;
    const CallStore& store = monitor.store();
    for (std::uint32_t i = 0; i < store.size(); ++i)
        if (!(store.call(i).flags & Reported)) // (a call that left and came back was measured)
            collector.addCall(store, i);
    const Advice advice =
        collector.finish(monitor.engine().anomalies(), options.safety, since, until);
    if (options.json) {
        std::cout << adviceJson(advice) << '\n';
    } else {
        std::cout << adviceText(advice);
        for (const std::string& id : advice.atRisk)
            std::cout << "  " << visibleText(id) << '\n';
    }
    printRejects(monitor.rejects());
    printGaps(monitor.gaps());
    std::cout.flush();
    return ExitOk;
}

int runWatchCommand(const WatchOptions& options) {
    const bool json = options.json;
    const EpochMillis start = nowMillis();
    const auto since = parseWhen(options.since, start);
    if (!since || *since > start)
        return usageError("watch", "--since: the start lies in the future");
    const auto config = loadConfigOrReport(options.config);
    if (!config)
        return ExitUsage;

    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    Monitor monitor(*config);
    std::unique_ptr<MetricsServer> metrics;
    if (!options.metrics.empty()) {
        try {
            metrics = std::make_unique<MetricsServer>(options.metrics);
        } catch (const std::exception& e) {
            std::cerr << "callscope watch: " << visibleText(e.what()) << '\n';
            return ExitRuntime;
        }
        std::cerr << "callscope watch: Prometheus metrics at http://"
                  << (options.metrics.rfind(':', 0) == 0 ? "0.0.0.0" + options.metrics
                                                         : options.metrics)
                  << "/metrics" << std::endl;
    }
    std::unique_ptr<ExecRunner> exec;
    if (!options.exec.empty())
        exec = std::make_unique<ExecRunner>(options.exec, options.execConcurrency,
                                            *parseDuration(options.execTimeout));
    // Failures of --exec on stderr: the first, then at 10, 100, 1000, ...
    std::int64_t execFailures = 0;
    const auto reportExec = [&] {
        if (!exec)
            return;
        for (const std::string& why : exec->takeNewFailures()) {
            ++execFailures;
            bool say = true;
            for (std::int64_t n = execFailures; n > 1 && say; n /= 10)
                say = n % 10 == 0;
            if (say)
                std::cerr << "callscope watch: exec failed (" << execFailures
                          << (execFailures == 1 ? " failure" : " failures")
                          << " so far): " << visibleText(why) << std::endl;
        }
    };
    // The window's anomalies (judged once it is loaded) are printed, but they
    // are not news: --exec and the opened counters take only what happens
    // while following.
    bool following = false;
    const auto print = [&](const AnomalyChange& c) {
        // An open anomaly forgotten over the memory budget is said to be, so a
        // consumer does not hold it open forever; resolved ones were closed.
        if (c.what == ChangeKind::Forgotten && !c.anomaly.open)
            return;
        const char* what = c.what == ChangeKind::Opened     ? "opened"
                           : c.what == ChangeKind::Changed  ? "changed"
                           : c.what == ChangeKind::Resolved ? "resolved"
                                                            : "forgotten";
        if (metrics && following)
            metrics->anomalyChanged(c, nowMillis());
        JsonWriter line;
        writeAnomaly(line, c.anomaly, what);
        if (exec && following)
            exec->submit({line.text(), what, std::string(toString(c.anomaly.kind)),
                          std::string(toString(c.anomaly.severity))});
        if (json) {
            std::cout << line.text() << std::endl;
        } else {
            std::cout << formatIsoMillis(nowMillis()) << " " << what << " "
                      << readableAnomaly(c.anomaly) << std::endl;
        }
        if (!std::cout) // stdout closed (`| head`): nobody reads any more
            g_stop = true;
    };
    // Each source loads the window before now (retrying while it is down),
    // then follows; the window's anomalies come out once every source has
    // loaded it or is down.
    printDetectionsOff("watch", monitor.engine().sources());
    monitor.startLive(*since);
    bool announced = false;
    std::map<std::string, SourceState> shown;
    auto lastRetention = std::chrono::steady_clock::now();
    auto lastMetrics = lastRetention - std::chrono::seconds(2);
    while (!g_stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        try {
            following = monitor.windowJudged(); // before the pump that judges the window
            for (const AnomalyChange& c : monitor.pump(nowMillis()))
                print(c);
        } catch (const SourceError& e) {
            monitor.stop();
            return sourceError("watch", e);
        }
        if (!announced && monitor.windowJudged()) {
            announced = true;
            std::cerr << "callscope watch: window since " << formatIsoMillis(*since)
                      << " loaded; following live" << std::endl;
        }
        for (const SourceHealth& h : monitor.healthChanges())
            std::cerr << "callscope watch: " << visibleText(h.source) << " "
                      << visibleText(!h.connected     ? "DOWN: " + h.lastError
                                     : h.note.empty() ? std::string("connected")
                                                      : h.note)
                      << std::endl;
        // Lagging and quiet are states of their own, said when they start and end.
        for (const SourceHealth& h : monitor.sourceStates(nowMillis())) {
            SourceState& was = shown[h.source];
            const bool said = was == SourceState::Lagging || was == SourceState::Quiet;
            const bool say = h.state == SourceState::Lagging || h.state == SourceState::Quiet;
            if ((say || said) && h.state != was && h.state != SourceState::Down)
                std::cerr << "callscope watch: " << h.source << " " << toString(h.state)
                          << (h.state == SourceState::Quiet
                                  ? " (nothing new since " +
                                        (h.lastDataAt == kNoTime ? std::string("it started")
                                                                 : formatIsoMillis(h.lastDataAt)) +
                                        ")"
                              : h.state == SourceState::Lagging && h.readTo != kNoTime
                                  ? " (read up to " + formatIsoMillis(h.readTo) + ")"
                                  : std::string())
                          << std::endl;
            was = h.state;
        }
        printPlaceholders(monitor.takeNewPlaceholders());
        reportExec();
        if (metrics && std::chrono::steady_clock::now() - lastMetrics > std::chrono::seconds(1)) {
            lastMetrics = std::chrono::steady_clock::now();
            const ExecStats x = exec ? exec->stats() : ExecStats{};
            metrics->update(monitor, nowMillis(), exec ? &x : nullptr);
        }
        if (monitor.windowJudged() &&
            std::chrono::steady_clock::now() - lastRetention > std::chrono::seconds(60)) {
            lastRetention = std::chrono::steady_clock::now();
            const EvictionStats before = monitor.evictions();
            monitor.applyRetention(nowMillis());
            const EvictionStats& after = monitor.evictions();
            if (after.overBudget > before.overBudget || after.anomalies > before.anomalies)
                std::cerr << "callscope watch: store over its memory budget ([store] max_bytes): "
                          << after.overBudget - before.overBudget << " calls evicted early"
                          << (after.anomalies > before.anomalies
                                  ? ", " + std::to_string(after.anomalies - before.anomalies) +
                                        " oldest anomalies forgotten"
                                  : std::string())
                          << "; the store now holds " << after.storeBytes / (1024 * 1024) << " MiB"
                          << std::endl;
        }
    }
    monitor.stop();
    for (const AnomalyChange& c : monitor.pump(nowMillis()))
        print(c);
    printRejects(monitor.rejects());
    printGaps(monitor.gaps());
    printPlaceholders(monitor.takeNewPlaceholders());
    if (exec) {
        // What is queued still runs, for a few seconds at most.
        exec->finish(Millis{5000});
        reportExec();
        const ExecStats x = exec->stats();
        std::cerr << "callscope watch: exec: " << x.run << " run, " << x.failed << " failed ("
                  << x.timedOut << " timed out), " << x.dropped << " dropped (queue full), "
                  << x.notRun << " not run (queued when watch stopped)" << std::endl;
    }
    return ExitOk;
}

namespace {

// `inspect --group`: the callId's group, each member's marks on one axis.
int printGroup(const Monitor& monitor, std::uint32_t call, bool json) {
    CallGroup g = groupOf(monitor.store(), monitor.engine(), call, nowMillis());
    if (g.empty()) {
        g = compareCalls(monitor.store(), {call}, nowMillis());
        g.kind = "none";
    }
    if (json) {
        JsonWriter w;
        writeGroup(w, g);
        std::cout << w.text() << '\n';
        return ExitOk;
    }
    std::cout << "group  " << (g.kind == "none" ? "none: the callId is in no group" : g.kind)
              << (g.cause.empty() ? "" : "  cause " + g.cause)
              << (g.tie.empty() ? "" : "  tied by " + visibleText(g.tie)) << '\n';
    for (std::size_t k = 0; k < g.members.size(); ++k) {
        const GroupMember& m = g.members[k];
        std::cout << "\n"
                  << k + 1 << ". callId " << visibleText(m.timeline.callId) << "  first "
                  << formatIsoMillis(m.firstAt)
                  << (k > 0 && g.kind == "key_rotation" ? "  (the request again, new key)" : "")
                  << "\n   record "
                  << (m.timeline.record.present ? visibleText(m.timeline.record.status) : "none")
                  << "\n";
        for (const EpochMillis t : m.timeouts)
            std::cout << "   " << formatIsoMillis(t) << "  caller timeout\n";
        for (const EpochMillis t : m.executions)
            std::cout << "   " << formatIsoMillis(t) << "  executed\n";
    }
    return ExitOk;
}

} // namespace

int runInspectCommand(const InspectOptions& options) {
    const bool json = options.json;
    const std::string& callId = options.callId;
    const EpochMillis now = nowMillis();
    std::optional<EpochMillis> since;
    if (!options.since.empty())
        since = parseWhen(options.since, now);
    const auto config = loadConfigOrReport(options.config);
    if (!config)
        return ExitUsage;
    if (options.group && !since) // the siblings are found in memory: load their window
        since = now - 2 * config->detect.keyRotationWindow.count();
    std::signal(SIGINT, onStopSignal);
    Monitor monitor(*config);
    std::uint32_t i = CallStore::npos;
    ColdFetchStats cold;
    try {
        // The lookup opens the connection it needs; the window's is opened
        // only when a window is read.
        if (since) {
            monitor.connect();
            monitor.loadWindow(*since, now, g_stop);
        }
        i = monitor.ensureCall(callId, g_stop, &cold);
    } catch (const SourceError& e) {
        return sourceError("inspect", e);
    }
    if (i == CallStore::npos) {
        std::cerr << "callscope inspect: nothing is known of callId " << visibleText(callId)
                  << " (no record, no attempts, no messages on its partitions)\n";
        return ExitRuntime;
    }
    if (options.group)
        return printGroup(monitor, i, json);
    const CallTimeline t = buildTimeline(monitor.store(), i, nowMillis());
    const Diagnosis d = diagnose(monitor.store(), monitor.engine(), i);
    const auto anomalies = monitor.engine().anomaliesOf(callId);
    if (json) {
        JsonWriter w;
        w.object().field("type", "call").key("timeline");
        writeTimeline(w, t);
        w.key("anomalies").array();
        for (const Anomaly* a : anomalies)
            writeAnomaly(w, *a);
        w.end().key("diagnosis");
        writeDiagnosis(w, d);
        w.key("coldRead")
            .object()
            .field("topics", cold.topics)
            .field("messagesScanned", cold.messagesScanned)
            .field("messagesMatched", cold.messagesMatched)
            .end()
            .end();
        std::cout << w.text() << '\n';
        return ExitOk;
    }
    std::cout << "callId " << visibleText(t.callId)
              << (t.bizNo.empty() ? "" : "   bizNo " + visibleText(t.bizNo)) << '\n';
    if (t.record.present)
        std::cout << "record  " << visibleText(t.record.status) << "  digest "
                  << visibleText(shortDigest(t.record.digest)) << "  first_source "
                  << visibleText(t.record.firstSource) << "  lock_version " << t.record.lockVersion
                  << "\n        created " << formatIsoMillis(t.record.createdAt) << "  updated "
                  << formatIsoMillis(t.record.updatedAt) << "  expires "
                  << (t.record.expireAt == kNoTime ? "?" : formatIsoMillis(t.record.expireAt))
                  << '\n';
    else
        std::cout << "record  none\n";
    std::cout << "\ntimeline\n";
    for (const TimelineEntry& e : t.entries)
        std::cout << "  " << formatIsoMillis(e.at) << "  " << visibleText(e.text) << '\n';
    std::cout << "\nstate bands\n";
    for (const StateBand& b : t.bands) {
        char lane[16];
        std::snprintf(lane, sizeof lane, "%-8s", std::string(toString(b.lane)).c_str());
        std::cout << "  " << lane << formatIsoMillis(b.from) << " .. " << formatIsoMillis(b.to)
                  << "  " << visibleText(b.state) << '\n';
    }
    std::cout << "\nanomalies" << (anomalies.empty() ? ": none" : "") << '\n';
    for (const Anomaly* a : anomalies)
        std::cout << "  " << readableAnomaly(*a) << '\n';
    std::cout << "\ndiagnosis\n";
    int n = 0;
    for (const DiagnosisStep& s : d.steps)
        std::cout << "  " << ++n << ". " << visibleText(s.question) << " " << visibleText(s.answer)
                  << (s.decisive ? "  <- decisive" : "") << '\n';
    std::cout << "  verdict: " << visibleText(d.verdict) << '\n';
    std::cout << "  cause: " << toString(d.cause) << '\n';
    if (!d.siblingCallIds.empty()) {
        std::cout << "  sibling callIds:";
        for (const auto& s : d.siblingCallIds)
            std::cout << ' ' << visibleText(s);
        std::cout << '\n';
    }
    for (const Evidence& e : d.evidence)
        std::cout << "    " << formatIsoMillis(e.at) << "  " << visibleText(e.callId) << "  "
                  << visibleText(e.what) << '\n';
    return ExitOk;
}

} // namespace callscope
