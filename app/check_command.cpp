#include "app/check_command.h"

#include "app/monitor.h"
#include "connectors/secrets.h"
#include "models/anomaly.h"
#include "models/visible_text.h"

#include <iostream>
#include <sstream>

namespace callscope {
namespace {

std::string thousands(std::int64_t n) {
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

std::string when(EpochMillis t) {
    return t == kNoTime ? "-" : formatIsoMillis(t);
}

std::string padded(const std::string& s, std::size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

// What was found, counted: a problem fails the check, a warning does not.
struct Tally {
    int problems = 0, warnings = 0;
    bool configProblem = false; // the mapping does not fit the database: exit 2, as scan
    void problem(const std::string& what) {
        ++problems;
        std::cout << "  PROBLEM: " << visibleText(what) << '\n';
    }
    void warning(const std::string& what) {
        ++warnings;
        std::cout << "  warning: " << visibleText(what) << '\n';
    }
};

void printRejections(const std::vector<Rejection>& rejected, std::size_t limit) {
    std::size_t n = 0;
    for (const Rejection& r : rejected) {
        if (n++ == limit)
            break;
        std::cout << "    rejected " << visibleText(r.where) << ": " << visibleText(r.reason)
                  << ": " << visibleText(r.sample) << '\n';
    }
}

void printRelation(const PostgresCheck::Relation& rel, Tally& tally) {
    if (!rel.found) {
        std::cout << "  " << rel.key << "  " << visibleText(rel.name) << ": NOT FOUND\n";
        return;
    }
    std::cout << "  " << rel.key << "  " << visibleText(rel.name) << " (" << rel.kind << ", "
              << (rel.estimated ? "~" : "") << thousands(rel.rows) << " row"
              << (rel.rows == 1 ? "" : "s") << (rel.estimated ? ", estimated" : "") << ")\n";
    for (const auto& col : rel.columns)
        std::cout << "    " << padded(col.key, 26)
                  << (col.name.empty() ? std::string("(not mapped)")
                      : !col.found
                          ? padded(visibleText(col.name), 18) + "MISSING"
                          : padded(visibleText(col.name), 18) + visibleText(col.type) +
                                (col.domain.empty() ? ""
                                                    : " (domain " + visibleText(col.domain) + ")"))
                  << '\n';
    for (const auto& a : rel.access) {
        std::cout << "    " << (a.indexed ? "indexed  " : "NO INDEX ") << a.what << "\n"
                  << "             " << (a.plan.empty() ? "(no plan)" : visibleText(a.plan))
                  << '\n';
        if (!a.indexed && !a.plan.empty())
            tally.warning(rel.key + " " + a.what.substr(0, a.what.find(':')) + " scans the whole " +
                          rel.kind + "; add " + a.advice);
    }
    if (!rel.windowRead.empty())
        std::cout << "    window reads in " << rel.windowRead << '\n';
    if (rel.writable)
        tally.warning("the role may write " + rel.name +
                      ": callscope needs SELECT only (README, Security: least privilege)");
    if (rel.rows == 0 && !rel.estimated)
        tally.warning(rel.name + " is empty: nothing to judge yet");
}

void checkPostgres(const Config& config, int sample, Tally& tally) {
    std::cout << "PostgreSQL  " << visibleText(redactDsn(config.postgres.dsn)) << '\n';
    PostgresCheck found;
    try {
        PostgresSource source(config.postgres);
        found = source.check(static_cast<std::size_t>(sample));
    } catch (const SourceError& e) {
        tally.configProblem |= e.configError;
        tally.problem(e.what());
        return;
    }
    std::cout << "  server " << visibleText(found.server) << ", user " << visibleText(found.user)
              << ", read-only session: " << (found.readOnly ? "yes" : "no") << '\n';
    if (found.superuser)
        tally.warning("user " + found.user +
                      " is a superuser: callscope needs SELECT on its tables only");
    for (const PostgresCheck::Relation& rel : found.relations)
        printRelation(rel, tally);
    if (!config.readsAttempts())
        std::cout << "  attempt  not read ([postgres.attempt] enabled = false)\n";
    for (const std::string& p : found.mappingProblems) {
        tally.configProblem = true;
        tally.problem(p);
    }
    for (const std::string& n : found.notes)
        tally.warning(n);
    if (!found.mappingProblems.empty())
        return;
    const ObservationBatch& s = found.sample;
    std::cout << "  sample: " << s.records.size() << " newest records"
              << (config.readsAttempts()
                      ? ", " + std::to_string(s.attempts.size()) + " newest attempts"
                      : std::string())
              << " decoded, " << s.rejected.size() << " rejected\n";
    for (const RecordObservation& r : s.records)
        std::cout << "    record " << visibleText(r.callId) << "  " << toString(r.status)
                  << "  updated " << when(r.updatedAt) << "  expires " << when(r.expireAt)
                  << "  digest " << visibleText(shortDigest(r.digest))
                  << (r.firstSource.empty() ? std::string()
                                            : "  first source " + visibleText(r.firstSource))
                  << '\n';
    for (const AttemptObservation& a : s.attempts)
        std::cout << "    attempt #" << a.id << " " << visibleText(a.callId) << "  "
                  << toString(a.outcome) << "  from " << visibleText(a.sourceInstance)
                  << "  arrived " << when(a.arrivedAt) << '\n';
    printRejections(s.rejected, static_cast<std::size_t>(sample));
    if (!s.rejected.empty())
        tally.warning(std::to_string(s.rejected.size()) +
                      " of the newest rows do not fit the mapping (see above): they would be "
                      "counted and skipped");
}

// The business-effect probe ([probe]): its query prepared and planned;
// false when it cannot be (effect_missing will not run).
bool checkProbe(const Config& config, Tally& tally) {
    const ProbeConfig& p = config.probe;
    std::cout << "  probe    " << visibleText(p.sql) << "  ($1 = " << p.key << ", "
              << formatDuration(p.delay) << " after SUCCESS, rate " << p.rate << ", at most "
              << p.maxPerSecond << "/s)\n";
    EffectProbe probe(config.postgres, p);
    EffectProbe::Plan plan;
    std::string error;
    if (!probe.explain(plan, error)) {
        tally.configProblem = true;
        tally.problem("probe.sql cannot be prepared: " + error);
        return false;
    }
    std::cout << "    " << (plan.scansWholeTable ? "NO INDEX " : "planned  ")
              << (plan.lines.empty() ? std::string("(no plan)") : visibleText(plan.lines.front()))
              << '\n';
    if (plan.scansWholeTable)
        tally.warning("probe.sql scans the whole table for each SUCCESS record; index the column "
                      "$1 is compared with");
    return true;
}

// What Kafka turned out to hold: the sources the detections will really have.
struct KafkaFound {
    bool receipts = false, callers = false;
};

KafkaFound checkKafka(const Config& config, int sample, Tally& tally) {
    const auto protocol = config.kafka.properties.find("security.protocol");
    std::cout << "Kafka  " << visibleText(config.kafka.brokers)
              << (protocol != config.kafka.properties.end()
                      ? " (" + visibleText(protocol->second) + ")"
                      : std::string())
              << '\n';
    KafkaCheck found;
    try {
        KafkaSource source(config.kafka);
        const std::atomic<bool> never{false};
        found = source.check(static_cast<std::size_t>(sample), never);
    } catch (const SourceError& e) {
        tally.configProblem |= e.configError;
        tally.problem(e.what());
        return {};
    }
    const auto list = [&](bool receipts, const std::string& spec, bool missing) {
        const char* what = receipts ? "receipt topics" : "caller event topics";
        if (spec.empty()) {
            std::cout << "  " << what << ": not read (kafka." << (receipts ? "receipt" : "caller")
                      << "_topics is empty)\n";
            return;
        }
        std::cout << "  " << what << " \"" << visibleText(spec) << "\""
                  << (spec.front() == '^' ? " (a pattern)" : "") << ":\n";
        for (const KafkaCheck::Topic& t : found.topics)
            if (t.receipts == receipts)
                std::cout << "    " << visibleText(t.name) << "  " << t.partitions << " partition"
                          << (t.partitions == 1 ? "" : "s") << ", " << thousands(t.messages)
                          << " messages"
                          << (t.timestampType.empty() ? std::string()
                                                      : ", timestamps " + t.timestampType)
                          << '\n';
        if (missing)
            tally.warning(std::string(what) + " \"" + spec +
                          "\" match no topic on the brokers: they are not read until they "
                          "exist" +
                          (receipts ? " (receipt_missing is not judged meanwhile)" : ""));
    };
    list(true, config.kafka.receiptTopics, found.receiptsMissing);
    list(false, config.kafka.callerTopics, found.callersMissing);
    for (const std::string& p : found.problems)
        tally.problem(p);
    if (found.topics.empty() && !config.readsPostgres())
        tally.problem("no configured topic exists and PostgreSQL is not read: nothing to judge");
    for (const KafkaCheck::Topic& t : found.topics)
        if (t.timestampType == "LogAppendTime" || t.timestampType == "mixed")
            tally.warning("topic " + t.name + " has " + t.timestampType +
                          " timestamps: a window is sought by the time the broker appended a "
                          "message, not the time it was produced");
    if (found.keysElsewhere > 0)
        tally.warning(std::to_string(found.keysElsewhere) + " of " +
                      std::to_string(found.keysChecked) +
                      " sampled callId keys are not in the partition kafka.partitioner = \"" +
                      config.kafka.partitioner +
                      "\" names: a drill-down of a callId outside memory would miss them; set "
                      "the partitioner the producers use");
    const ObservationBatch& s = found.sample;
    std::cout << "  sample: " << found.sampled << " newest messages, "
              << s.receipts.size() + s.callerEvents.size() << " decoded, " << s.rejected.size()
              << " rejected"
              << (found.keysChecked > 0
                      ? ", " + std::to_string(found.keysChecked - found.keysElsewhere) + " of " +
                            std::to_string(found.keysChecked) +
                            " keys where the partitioner puts "
                            "them"
                      : std::string())
              << '\n';
    std::size_t n = 0;
    for (const ReceiptObservation& r : s.receipts)
        if (n++ < static_cast<std::size_t>(sample))
            std::cout << "    receipt " << visibleText(r.callId) << "  v" << r.version << " "
                      << toString(r.status) << "  finished " << when(r.finishedAt)
                      << (r.sourceInstance.empty() ? std::string()
                                                   : "  from " + visibleText(r.sourceInstance))
                      << '\n';
    n = 0;
    for (const CallerObservation& c : s.callerEvents)
        if (n++ < static_cast<std::size_t>(sample))
            std::cout << "    caller " << visibleText(c.callId) << "  " << toString(c.state)
                      << "  at " << when(c.at) << "  by " << visibleText(c.instance)
                      << (c.bizNo.empty() ? std::string() : "  bizNo " + visibleText(c.bizNo))
                      << '\n';
    printRejections(s.rejected, static_cast<std::size_t>(sample));
    if (!s.rejected.empty())
        tally.warning(std::to_string(s.rejected.size()) + " of " + std::to_string(found.sampled) +
                      " sampled messages do not fit the mapping (see above): they would be "
                      "counted and skipped");
    return {!found.receiptsMissing && config.readsReceipts(),
            !found.callersMissing && config.readsCallerEvents()};
}

} // namespace

int runCheckCommand(const CheckOptions& options) {
    const auto config = loadConfigOrReport(options.config);
    if (!config)
        return ExitUsage;
    std::cout << "config: "
              << (config->sourcePath.empty() ? std::string("built-in defaults (no file)")
                                             : visibleText(config->sourcePath))
              << " is valid\n\n";
    Tally tally;
    bool probeWorks = config->probe.enabled();
    if (config->readsPostgres()) {
        checkPostgres(*config, options.sample, tally);
        if (config->probe.enabled())
            probeWorks = checkProbe(*config, tally);
    } else
        std::cout << "PostgreSQL  not read ([postgres] enabled = false)\n";
    std::cout << '\n';
    KafkaFound kafka;
    if (config->readsKafka())
        kafka = checkKafka(*config, options.sample, tally);
    else
        std::cout << "Kafka  not read (kafka.receipt_topics and kafka.caller_topics are empty)\n";

    // The detections as the sources stand now: a topic that does not exist
    // yet turns off what needs it until it does.
    DetectionSources sources = sourcesOf(*config);
    sources.receipts = kafka.receipts;
    sources.callerEvents = kafka.callers;
    sources.probe = sources.probe && probeWorks;
    auto off = detectionsOff(sources);
    if (config->probe.enabled() && !probeWorks) // say why it is off: not for want of a [probe]
        for (auto& [kind, why] : off)
            if (kind == AnomalyKind::EffectMissing)
                why = "probe.sql cannot be prepared (PROBLEM above)";
    std::string on;
    for (const std::string_view kind : kAnomalyKindNames) {
        bool isOff = false;
        for (const auto& [k, why] : off)
            isOff |= toString(k) == kind;
        if (!isOff)
            on += (on.empty() ? "" : ", ") + std::string(kind);
    }
    std::cout << "\nDetections that will run (" << kAnomalyKindNames.size() - off.size()
              << "): " << on << '\n';
    if (!off.empty()) {
        std::cout << "Detections off (" << off.size() << "):\n";
        for (const auto& [kind, why] : off)
            std::cout << "  " << padded(std::string(toString(kind)), 22) << why << '\n';
    }
    std::cout << '\n';
    if (tally.problems > 0) {
        std::cout << "not ready: " << tally.problems << " problem"
                  << (tally.problems == 1 ? "" : "s") << " (PROBLEM lines above)\n";
        return tally.configProblem ? ExitUsage : ExitRuntime;
    }
    std::cout << "ready"
              << (tally.warnings > 0 ? ", with " + std::to_string(tally.warnings) + " warning" +
                                           (tally.warnings == 1 ? "" : "s") + " (above)"
                                     : std::string())
              << '\n';
    return ExitOk;
}

} // namespace callscope
