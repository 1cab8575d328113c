// callscope report (SPEC §4.4): PDF, HTML or JSON by the file's extension.
#include "app/report_command.h"

#include "app/command_options.h"
#include "app/headless_commands.h"
#include "connectors/secrets.h"
#include "models/diagnosis.h"
#include "models/visible_text.h"
#include "views/report_renderer.h"

#include <QGuiApplication>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <set>

namespace callscope {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void onReportSignal(int) {
    g_stop = true;
}

} // namespace

Report buildReport(Monitor& m, const ReportRequest& req, const std::atomic<bool>& cancel) {
    Report r;
    r.generatedAt = nowMillis();
    r.payloadsIncluded = req.includePayloads;
    const Config& c = m.config();
    if (!c.readsPostgres())
        r.sources.push_back("PostgreSQL: not read (disabled: Kafka only)");
    else
        r.sources.push_back("PostgreSQL " + redactDsn(c.postgres.dsn) + " (tables " +
                            c.postgres.record.table +
                            (c.readsAttempts() ? ", " + c.postgres.attempt.table : "") + ")");
    if (!c.readsKafka())
        r.sources.push_back("Kafka: not read (no receipt or caller event topics configured)");
    else
        r.sources.push_back(
            "Kafka " + c.kafka.brokers + " (" +
            (c.kafka.receiptTopics.empty() ? "no receipts" : "receipts " + c.kafka.receiptTopics) +
            (c.kafka.callerTopics.empty() ? "" : ", caller events " + c.kafka.callerTopics) + ")");
    std::string off;
    for (const auto& [kind, why] : detectionsOff(m.engine().sources()))
        off += (off.empty() ? "" : "; ") + std::string(toString(kind)) + " (" + why + ")";
    if (!off.empty())
        r.sources.push_back("Detections off: " + off);
    std::vector<std::string> ids = req.callIds;
    if (!ids.empty()) {
        for (const std::string& id : ids)
            m.ensureCall(id, cancel);
    } else {
        for (const Anomaly& a : m.engine().anomalies())
            if (req.kinds.empty() || req.kinds.count(a.kind))
                r.anomalies.push_back(a);
        std::sort(r.anomalies.begin(), r.anomalies.end(), moreSevere);
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
    std::set<std::string> drawnGroups;
    for (const std::string& id : ids) {
        if (cancel)
            break;
        const std::uint32_t i = m.store().find(id);
        if (i == CallStore::npos)
            continue;
        ReportCall call;
        call.timeline = buildTimeline(m.store(), i, nowMillis());
        call.diagnosis = diagnose(m.store(), m.engine(), i);
        call.group = groupOf(m.store(), m.engine(), i, nowMillis());
        if (!call.group.empty()) { // drawn once, in the first of its calls in the report
            std::string key;
            for (const GroupMember& g : call.group.members)
                key += g.timeline.callId + '\n';
            call.drawsGroup = drawnGroups.insert(key).second;
        }
        for (const Anomaly* a : m.engine().anomaliesOf(id)) {
            call.anomalies.push_back(*a);
            if (req.callIds.size() && seen.insert(a->id).second)
                r.anomalies.push_back(*a);
        }
        std::sort(call.anomalies.begin(), call.anomalies.end(), moreSevere);
        call.resultSnapshot =
            req.includePayloads ? m.resultSnapshot(id, &cancel) : std::string(kRedacted);
        if (call.timeline.from != kNoTime) {
            lo = lo == kNoTime ? call.timeline.from : std::min(lo, call.timeline.from);
            hi = std::max(hi, call.timeline.to);
        }
        r.calls.push_back(std::move(call));
    }
    if (!req.callIds.empty()) {
        std::sort(r.anomalies.begin(), r.anomalies.end(), moreSevere);
        r.from = lo;
        r.to = hi;
    }
    return r;
}

int runReportCommand(int argc, char** argv, const ReportOptions& options) {
    const auto usage = [](const std::string& m) { return usageError("report", m); };
    const std::string& out = options.output;
    const auto dot = out.rfind('.');
    const std::string ext = dot == std::string::npos || dot == 0 ? "" : out.substr(dot + 1);
    if (ext != "pdf" && ext != "html" && ext != "json")
        return usage("-o: the file must end in .pdf, .html or .json, got \"" + out + "\"");
    const bool byWindow = !options.since.empty();
    if (options.callIds.empty() == !byWindow)
        return usage("give either --call-id ID ... or --since D");
    if (!options.until.empty() && !byWindow)
        return usage("--until needs --since");
    ReportRequest req;
    req.callIds = options.callIds;
    req.includePayloads = options.includePayloads;
    for (const auto& k : options.kinds)
        req.kinds.insert(*anomalyKindFromName(k)); // checked by the option table
    const EpochMillis now = nowMillis();
    if (byWindow) {
        const auto s = parseWhen(options.since, now);
        const auto u = options.until.empty() ? std::optional(now) : parseWhen(options.until, now);
        if (!s || !u || *s >= *u)
            return usage("--since must be before --until");
        req.since = *s;
        req.until = *u;
    }
    const auto config = loadConfigOrReport(options.config);
    if (!config)
        return ExitUsage;
    std::signal(SIGINT, onReportSignal);
    std::signal(SIGTERM, onReportSignal);
    Monitor monitor(*config);
    Report report;
    try {
        monitor.connect();
        if (byWindow)
            monitor.loadWindow(req.since, req.until, g_stop);
        printSourceFacts("report", monitor);
        report = buildReport(monitor, req, g_stop);
    } catch (const SourceError& e) {
        std::cerr << "callscope report: " << visibleText(e.what()) << '\n';
        return e.configError ? ExitUsage : ExitRuntime;
    }
    if (g_stop) {
        std::cerr << "callscope report: cancelled\n";
        return ExitRuntime;
    }
    // Fonts need a platform, not a screen: PDF and HTML paint offscreen.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    QString err;
    const auto progress = [](int, int) { return !g_stop.load(); };
    if (!writeReport(report, QString::fromStdString(out), err, progress)) {
        std::cerr << "callscope report: " << visibleText(err.toStdString()) << '\n';
        return ExitRuntime;
    }
    std::cerr << "callscope report: wrote " << out << " (" << report.anomalies.size()
              << " anomalies, " << report.calls.size() << " callIds)\n";
    return ExitOk;
}

} // namespace callscope
