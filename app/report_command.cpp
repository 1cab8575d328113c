// callscope report (SPEC §4.4): PDF, HTML or JSON by the file's extension.
#include "app/report_command.h"

#include "app/cli_args.h"
#include "models/diagnosis.h"
#include "views/report_renderer.h"

#include <QGuiApplication>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>

namespace callscope {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void onReportSignal(int) { g_stop = true; }

const char* kUsage = R"(usage: callscope report --config FILE (--call-id ID ... | --since D [--until T] [--kind K ...])
                       -o FILE.pdf|FILE.html|FILE.json [--include-payloads]

An incident report: window, sources, counts by kind and severity, the anomaly
table, and per callId its two-lane timeline, record, attempts, receipts,
caller events and diagnosis. result_snapshot is redacted unless
--include-payloads is given. The format follows the extension of -o.
)";

bool severer(const Anomaly& a, const Anomaly& b) {
    if (a.severity != b.severity)
        return a.severity > b.severity;
    return a.firstEventAt < b.firstEventAt;
}

} // namespace

Report buildReport(Monitor& m, const ReportRequest& req, const std::atomic<bool>& cancel) {
    Report r;
    r.generatedAt = nowMillis();
    r.payloadsIncluded = req.includePayloads;
    const Config& c = m.config();
    r.sources.push_back("PostgreSQL " + redactDsn(c.postgres.dsn) + " (tables " +
                        c.postgres.record.table +
                        (c.postgres.attempt.enabled ? ", " + c.postgres.attempt.table : "") + ")");
    r.sources.push_back("Kafka " + c.kafka.brokers + " (receipts " + c.kafka.receiptTopics +
                        (c.kafka.callerTopics.empty() ? "" : ", caller events " + c.kafka.callerTopics) + ")");
    std::vector<std::string> ids = req.callIds;
    if (!ids.empty()) {
        for (const std::string& id : ids)
            m.ensureCall(id, cancel);
    } else {
        for (const Anomaly& a : m.engine().anomalies())
            if (req.kinds.empty() || req.kinds.count(a.kind))
                r.anomalies.push_back(a);
        std::sort(r.anomalies.begin(), r.anomalies.end(), severer);
        for (const Anomaly& a : r.anomalies)
            for (const auto& id : a.callIds)
                if (std::find(ids.begin(), ids.end(), id) == ids.end())
                    ids.push_back(id);
        r.from = req.since;
        r.to = req.until;
    }
    std::set<std::uint64_t> seen;
    for (const Anomaly& a : r.anomalies)
        seen.insert(a.id);
    EpochMillis lo = kNoTime, hi = kNoTime;
    for (const std::string& id : ids) {
        if (cancel)
            break;
        const std::uint32_t i = m.store().find(id);
        if (i == CallStore::npos)
            continue;
        ReportCall call;
        call.timeline = buildTimeline(m.store(), i, nowMillis());
        call.diagnosis = diagnose(m.store(), m.engine(), i);
        for (const Anomaly* a : m.engine().anomaliesOf(id)) {
            call.anomalies.push_back(*a);
            if (req.callIds.size() && seen.insert(a->id).second)
                r.anomalies.push_back(*a);
        }
        std::sort(call.anomalies.begin(), call.anomalies.end(), severer);
        call.resultSnapshot = req.includePayloads ? m.resultSnapshot(id) : std::string(kRedacted);
        if (call.timeline.from != kNoTime) {
            lo = lo == kNoTime ? call.timeline.from : std::min(lo, call.timeline.from);
            hi = std::max(hi, call.timeline.to);
        }
        r.calls.push_back(std::move(call));
    }
    if (!req.callIds.empty()) {
        std::sort(r.anomalies.begin(), r.anomalies.end(), severer);
        r.from = lo;
        r.to = hi;
    }
    return r;
}

int runReportCommand(int argc, char** argv, std::vector<std::string> words) {
    CliArgs args(std::move(words));
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << kUsage;
        return ExitOk;
    }
    const auto configPath = args.value("--config");
    const auto callIds = args.values("--call-id");
    const auto sinceText = args.value("--since");
    const auto untilText = args.value("--until");
    const auto kindTexts = args.values("--kind");
    const auto out = args.value("-o");
    const bool payloads = args.flag("--include-payloads");
    std::string error;
    const auto usage = [](const std::string& m) {
        std::cerr << "callscope report: " << m << "\n(callscope report --help lists the options)\n";
        return ExitUsage;
    };
    if (!args.finish(error))
        return usage(error);
    if (!out)
        return usage("-o FILE is required (.pdf, .html or .json)");
    const std::string ext = out->size() > 5 ? out->substr(out->rfind('.') + 1) : "";
    if (ext != "pdf" && ext != "html" && ext != "json")
        return usage("-o: the file must end in .pdf, .html or .json, got \"" + *out + "\"");
    if (callIds.empty() == !sinceText)
        return usage("give either --call-id ID ... or --since D");
    ReportRequest req;
    req.callIds = callIds;
    req.includePayloads = payloads;
    for (const auto& k : kindTexts) {
        const auto kind = anomalyKindFromName(k);
        if (!kind)
            return usage("--kind: unknown kind \"" + k + "\"");
        req.kinds.insert(*kind);
    }
    const EpochMillis now = nowMillis();
    const auto when = [&](const std::string& t) { return parseWhen(t, now); };
    if (sinceText) {
        const auto s = when(*sinceText);
        const auto u = untilText ? when(*untilText) : std::optional<EpochMillis>(now);
        if (!s || !u || *s >= *u)
            return usage("--since/--until: expected durations such as 1h or ISO-8601 times, since first");
        req.since = *s;
        req.until = *u;
    }
    const auto config = loadConfigOrReport(configPath);
    if (!config)
        return ExitUsage;
    std::signal(SIGINT, onReportSignal);
    std::signal(SIGTERM, onReportSignal);
    Monitor monitor(*config);
    Report report;
    try {
        monitor.connect();
        if (sinceText)
            monitor.loadWindow(req.since, req.until, g_stop);
        report = buildReport(monitor, req, g_stop);
    } catch (const SourceError& e) {
        std::cerr << "callscope report: " << e.what() << '\n';
        return e.configError ? ExitUsage : ExitRuntime;
    }
    if (g_stop) {
        std::cerr << "callscope report: cancelled\n";
        return ExitRuntime;
    }
    if (ext == "json") {
        std::ofstream f(*out, std::ios::trunc);
        f << reportJson(report) << '\n';
        if (!f) {
            std::cerr << "callscope report: cannot write " << *out << '\n';
            return ExitRuntime;
        }
    } else {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
            qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen"); // fonts need a platform, not a screen
        QGuiApplication app(argc, argv);
        QString err;
        const QString path = QString::fromStdString(*out);
        const auto progress = [](int, int) { return !g_stop.load(); };
        const bool ok = ext == "pdf" ? writeReportPdf(report, path, err, progress)
                                     : writeReportHtml(report, path, err, progress);
        if (!ok) {
            std::cerr << "callscope report: " << err.toStdString() << '\n';
            return ExitRuntime;
        }
    }
    std::cerr << "callscope report: wrote " << *out << " (" << report.anomalies.size()
              << " anomalies, " << report.calls.size() << " callIds)\n";
    return ExitOk;
}

} // namespace callscope
