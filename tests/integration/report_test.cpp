// callscope report from the simulator's data on the real stack, in each
// format: the injected callIds, kinds, instances and verdicts are there, clean
// callIds are not, payloads are redacted unless asked for, the HTML stands
// alone, and the JSON has the documented structure.
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <set>

#include <sys/stat.h>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

struct Fixture {
    TestStack stack;
    Situations truth;
    SimData data;
    std::string config;
    std::set<std::string> faulted, clean;
};

const Fixture& fixture() {
    static Fixture* f = [] {
        auto* x = new Fixture{TestStack::fresh("report"), {}, {}, {}, {}, {}};
        SimOptions o;
        o.duration = Millis{3000};
        o.rate = 30;
        o.seed = 9;
        for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
            o.faults[static_cast<AnomalyKind>(i)] = 0.04;
        o.receiptTopic = x->stack.receiptTopic;
        o.allowWritesTo = x->stack.database;
        o.callerTopic = x->stack.callerTopic;
        const TempFile truth("report-truth.jsonl");
        o.truthPath = truth.path;
        const SimResult r = runSimulation(x->stack.config, o);
        const EpochMillis end = nowMillis();
        if (!r.ok)
            throw std::runtime_error(r.error);
        x->truth = readAnomalyLines(readFile(truth.path));
        x->data = loadSimData(x->stack.dsn, x->stack.brokers, x->stack.receiptTopic,
                              x->stack.callerTopic);
        x->config = x->stack.writeConfig("[detect]\nstuck_after = \"1s\"\nreceipt_grace = "
                                         "\"1s\"\ncaller_alert_after = \"1s\"\n" +
                                         std::string(kSimProbe));
        for (const auto& [kind, sets] : x->truth)
            for (const std::string& ids : sets) {
                std::size_t start = 0;
                for (std::size_t comma; (comma = ids.find(',', start)) != std::string::npos;
                     start = comma + 1)
                    x->faulted.insert(ids.substr(start, comma - start));
                x->faulted.insert(ids.substr(start));
            }
        for (const auto& [id, rec] : x->data.records)
            if (!x->faulted.count(id) && x->clean.size() < 20)
                x->clean.insert(id);
        waitPast(end + 1200); // past every 1 s threshold
        return x;
    }();
    return *f;
}

CommandResult report(const std::string& out, const std::string& extra = {}) {
    return runCommand(callscopeBinary() + " report --config " + fixture().config +
                      " --since 10m -o " + out + " " + extra);
}

} // namespace

TEST(Report, JsonHasTheDocumentedStructureAndEveryInjectedAnomaly) {
    const Fixture& f = fixture();
    const TempFile out("report.json");
    const CommandResult r = report(out.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string text = readFile(out.path);
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(text);
    EXPECT_EQ(std::string_view(doc["type"].get_string()), "report");
    EXPECT_FALSE(std::string_view(doc["window"]["from"].get_string()).empty());
    EXPECT_FALSE(std::string_view(doc["generatedAt"].get_string()).empty());
    EXPECT_EQ(bool(doc["payloadsIncluded"].get_bool()), false);
    EXPECT_EQ(doc["sources"].get_array().size(), 2u);
    Situations listed;
    for (auto a : doc["anomalies"].get_array()) {
        std::string ids;
        for (auto v : a["callIds"].get_array())
            ids += (ids.empty() ? "" : ",") + std::string(std::string_view(v.get_string()));
        listed[std::string(std::string_view(a["kind"].get_string()))].insert(ids);
    }
    EXPECT_EQ(listed, f.truth) << describe(listed);
    std::set<std::string> sections;
    for (auto c : doc["calls"].get_array()) {
        sections.insert(std::string(std::string_view(c["callId"].get_string())));
        EXPECT_TRUE(c["timeline"]["events"].is_array());
        EXPECT_TRUE(c["timeline"]["bands"].is_array());
        EXPECT_FALSE(std::string_view(c["diagnosis"]["verdict"].get_string()).empty());
        EXPECT_EQ(std::string_view(c["resultSnapshot"].get_string()).rfind("[redacted", 0), 0u);
    }
    EXPECT_EQ(sections, f.faulted);
    for (const auto& id : f.clean)
        EXPECT_EQ(text.find(id), std::string::npos) << id;
    EXPECT_NE(text.find("Key rotated"), std::string::npos);
}

TEST(Report, PayloadsOnlyWhenAskedFor) {
    const TempFile redacted("redacted.json"), full("full.json");
    ASSERT_EQ(report(redacted.path).exitCode, 0);
    const CommandResult r = report(full.path, "--include-payloads");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The simulator's snapshots carry an account number.
    EXPECT_EQ(readFile(redacted.path).find("DE89 3704"), std::string::npos);
    EXPECT_NE(readFile(full.path).find("DE89 3704"), std::string::npos);
    EXPECT_NE(readFile(full.path).find(R"("payloadsIncluded":true)"), std::string::npos);
    // With payloads the file is the owner's alone, whatever the umask.
    struct stat st {};
    ASSERT_EQ(::stat(full.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const TempFile pdf("full.pdf");
    ASSERT_EQ(report(pdf.path, "--include-payloads").exitCode, 0);
    ASSERT_EQ(::stat(pdf.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Report, HtmlStandsAloneWithVectorTimelines) {
    const Fixture& f = fixture();
    const TempFile out("report.html");
    const CommandResult r = report(out.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string html = readFile(out.path);
    for (const auto& id : f.faulted)
        EXPECT_NE(html.find(id), std::string::npos) << id;
    for (const auto& [kind, _] : f.truth)
        EXPECT_NE(html.find(kind), std::string::npos) << kind;
    for (const auto& id : f.clean)
        EXPECT_EQ(html.find(id), std::string::npos) << id;
    EXPECT_NE(html.find("order-api-1"), std::string::npos);
    EXPECT_NE(html.find("Key rotated"), std::string::npos);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("[redacted"), std::string::npos);
    EXPECT_EQ(html.find("DE89 3704"), std::string::npos);
    for (const char* external :
         {"src=\"http", "href=\"http", "<link", "@import", "url(http", "<script"})
        EXPECT_EQ(html.find(external), std::string::npos) << external;
}

TEST(Report, PdfHasTheCallsKindsAndVerdicts) {
    const Fixture& f = fixture();
    const TempFile out("report.pdf");
    const CommandResult r = report(out.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const CommandResult text = runCommand("pdftotext " + out.path + " -");
    ASSERT_EQ(text.exitCode, 0) << text.err;
    for (const auto& id : f.faulted)
        EXPECT_NE(text.out.find("callId " + id), std::string::npos) << id;
    for (const auto& [kind, _] : f.truth)
        EXPECT_NE(text.out.find(kind), std::string::npos) << kind;
    for (const auto& id : f.clean)
        EXPECT_EQ(text.out.find(id), std::string::npos) << id;
    EXPECT_NE(text.out.find("Key rotated"), std::string::npos);
    EXPECT_NE(text.out.find("page 2"), std::string::npos);
    EXPECT_NE(text.out.find("callscope incident report"), std::string::npos);
    EXPECT_EQ(text.out.find("DE89 3704"), std::string::npos);
    // Pages render; the test leaves them for a look (report-page-1.png ...).
    EXPECT_EQ(runCommand("pdftoppm -png -r 70 -f 1 -l 3 " + out.path + " report-page").exitCode, 0);
}

TEST(Report, BadArgumentsAreRefused) {
    const std::string bin = callscopeBinary() + " report --config " + fixture().config;
    EXPECT_EQ(runCommand(bin + " --since 1h").exitCode, 2);
    EXPECT_EQ(runCommand(bin + " --since 1h -o report.docx").exitCode, 2);
    EXPECT_EQ(runCommand(bin + " -o r.json").exitCode, 2);
    EXPECT_EQ(runCommand(bin + " --since 1h --kind nonsense -o r.json").exitCode, 2);
}

// The database fails while the report reads a result snapshot (here a view
// whose column divides by zero for one row): the report says so and exits 1.
// libpqxx's exception escaped before and the process aborted.
TEST(Report, ADatabaseErrorWhileReportingIsAnErrorNotACrash) {
    const TestStack s = TestStack::fresh("report_pg_error");
    createFailingSnapshotView(s.dsn);
    const std::string config =
        s.writeConfig("[postgres.record]\ntable = \"rec_v\"\n[postgres.attempt]\nenabled = false\n"
                      "[detect]\nstuck_after = \"1m\"\n");
    const TempFile out("pg-error.html");
    const std::string command =
        callscopeBinary() + " report --config " + config + " --since 1h -o " + out.path;
    const CommandResult redacted = runCommand(command);
    EXPECT_EQ(redacted.exitCode, 0) << redacted.err; // the snapshot is not read
    const CommandResult r = runCommand(command + " --include-payloads");
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("callscope report: PostgreSQL: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("division by zero"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}
