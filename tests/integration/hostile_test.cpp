// Hostile strings through every exit (issue 10, SPEC §8): callIds, instances,
// bizNos and status words holding markup, quotes, terminal escapes, control
// characters, bidi overrides, invalid UTF-8 and 64 KB, written into a real
// PostgreSQL table and onto a real Kafka topic, then read by scan, watch,
// inspect and all three report formats. Each output must show them escaped
// and act on none of them. (The drill-down: gui_stack_test.cpp.)
#include "models/anomaly_json.h"
#include "models/timestamp.h"
#include "models/visible_text.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <pqxx/pqxx>
#include <simdjson.h>

#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>

#include <unistd.h>

using namespace callscope;
using namespace callscope::test;

namespace {

const std::string kLong = std::string(64 * 1024, 'A') + "\x1b[2J";

// The corpus: each string is used as a callId (with a unique prefix), an
// instance and a bizNo.
const std::vector<std::string>& corpus() {
    static const std::vector<std::string> c = {
        "x</title></svg><img src=x onerror=alert(1)>",
        "<script>alert(1)</script>\"'&amp;",
        "cls\x1b[2J\x1b]0;owned\x07",
        "csi\xc2\x9b"
        "31mred",
        "line\nFAKE [critical] forged line",
        "bidi\u202Eexe.txt\u2066x\u2069",
        "bad\xff\xfe utf8",
        kLong,
    };
    return c;
}

std::string jsonString(const std::string& s) {
    // Raw bytes in a JSON string (invalid UTF-8 stays invalid: the decoder
    // must reject it); only what JSON itself needs is escaped.
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// A shell word for any bytes but NUL or a trailing newline, for /bin/sh:
// "$(printf '...')" with every other byte as an octal escape.
std::string shellWord(const std::string& s) {
    std::string out = "\"$(printf '";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == ' ' || c == ':') {
            out += c;
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", u);
            out += buf;
        }
    }
    return out + "')\"";
}

struct Hostile {
    TestStack stack;
    std::string config;
    std::vector<std::string> recordIds, receiptIds;
};

const Hostile& hostile() {
    static Hostile* h = [] {
        auto* x = new Hostile{TestStack::fresh("hostile"), {}, {}, {}};
        // SQL_ASCII holds any bytes, as old databases do: invalid UTF-8 reaches callscope.
        const std::string db = "hostile_" + std::to_string(::getpid());
        {
            pqxx::connection c(x->stack.adminDsn);
            pqxx::nontransaction w(c);
            w.exec("DROP DATABASE IF EXISTS " + c.quote_name(db));
            w.exec("CREATE DATABASE " + c.quote_name(db) +
                   " ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
        }
        x->stack.dsn = withDatabase(x->stack.adminDsn, db);
        pqxx::connection c(x->stack.dsn);
        pqxx::work w(c);
        w.exec("CREATE TABLE idempotent_record (call_id text PRIMARY KEY, request_digest text NOT "
               "NULL, status text NOT NULL, result_snapshot text, first_source text, lock_version "
               "int NOT NULL DEFAULT 0, created_at timestamptz NOT NULL, updated_at timestamptz "
               "NOT NULL, expire_at timestamptz NOT NULL);"
               "CREATE TABLE idempotent_attempt (id bigserial PRIMARY KEY, call_id text NOT NULL, "
               "request_digest text NOT NULL, source_instance text NOT NULL, trace_id text, "
               "outcome text NOT NULL, arrived_at timestamptz NOT NULL, finished_at timestamptz)");

        char err[512];
        rd_kafka_conf_t* conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "bootstrap.servers", x->stack.brokers.c_str(), err, sizeof err);
        rd_kafka_conf_set(conf, "partitioner", "murmur2_random", err, sizeof err);
        rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        const auto produce = [&](const std::string& topic, const std::string& key,
                                 const std::string& value) {
            rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                              RD_KAFKA_V_KEY(key.data(), key.size()),
                              RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        };
        const std::string digest(64, 'd');
        for (std::size_t i = 0; i < corpus().size(); ++i) {
            const std::string& s = corpus()[i];
            const std::string id = "h" + std::to_string(i) + ":" + s;
            x->recordIds.push_back(id);
            // Stuck in PROCESSING for ten minutes, first seen from a hostile instance.
            w.exec_params("INSERT INTO idempotent_record VALUES ($1, $2, 'PROCESSING', $3, $4, 0, "
                          "now() - interval '10 min', now() - interval '10 min', "
                          "now() + interval '1 day')",
                          id, digest, s, s);
            w.exec_params("INSERT INTO idempotent_attempt (call_id, request_digest, "
                          "source_instance, outcome, arrived_at) VALUES ($1, $2, $3, "
                          "'EXECUTED', now() - interval '10 min')",
                          id, digest, s);
            // A receipt nobody's record explains (orphan_receipt) from a hostile source.
            const std::string rid = "r" + std::to_string(i) + ":" + s;
            x->receiptIds.push_back(rid);
            produce(x->stack.receiptTopic, rid,
                    "{\"callId\":" + jsonString(rid) + ",\"status\":\"SUCCESS\",\"version\":1," +
                        "\"sourceInstance\":" + jsonString(s) + "}");
            // A caller waiting for ever, from a hostile instance, with a hostile bizNo.
            produce(x->stack.callerTopic, id,
                    "{\"callId\":" + jsonString(id) + ",\"state\":\"AWAITING_RESPONSE\"," +
                        "\"attempt\":1,\"instance\":" + jsonString(s) +
                        ",\"bizNo\":" + jsonString("b" + std::to_string(i) + ":" + s) +
                        ",\"at\":\"" + formatIsoMillis(nowMillis() - 600'000) + "\"}");
            // Hostile status words: rejected, and the sample is printed.
            produce(x->stack.receiptTopic, rid,
                    "{\"callId\":\"s" + std::to_string(i) + "\",\"status\":" + jsonString(s) + "}");
        }
        w.exec("INSERT INTO idempotent_record VALUES ('status-word', 'd', "
               "E'<b>DONE</b>\\x1b[2J', NULL, 'i', 0, now(), now(), now() + interval '1 day')");
        w.commit();
        rd_kafka_flush(rk, 30'000);
        rd_kafka_destroy(rk);
        x->config = x->stack.writeConfig("[detect]\nstuck_after = \"1s\"\nreceipt_grace = "
                                         "\"1s\"\ncaller_alert_after = \"1s\"\n");
        return x;
    }();
    return *h;
}

// What a terminal must never receive, and what it must be shown instead.
void expectTerminalSafe(const std::string& text, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(isValidUtf8(text));
    for (const char* raw : {"\x1b", "\x07", "\xc2\x9b", "\u202E", "\u2066", "\xff"})
        EXPECT_EQ(text.find(raw), std::string::npos) << "raw bytes of " << visibleText(raw);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        EXPECT_NE(line.rfind("FAKE", 0), 0u) << "a newline in data forged a line";
}

void expectShownEscaped(const std::string& text, const std::string& what) {
    SCOPED_TRACE(what);
    for (const char* shown : {"\\x1b[2J", "\\x1b]0;owned\\x07", "\\x9b31mred", "\\u202eexe.txt",
                              "\\x0aFAKE [critical]", "bad\\xff\\xfe utf8"})
        EXPECT_NE(text.find(shown), std::string::npos) << shown;
}

std::string cli(const std::string& args) {
    return callscopeBinary() + " " + args + " --config " + hostile().config;
}

} // namespace

TEST(Hostile, TextScanShowsEveryHostileStringEscaped) {
    const CommandResult r = runCommand(cli("scan --since 1h"));
    ASSERT_EQ(r.exitCode, 0) << visibleText(r.err);
    expectTerminalSafe(r.out, "stdout");
    expectTerminalSafe(r.err, "stderr");
    expectShownEscaped(r.out, "stdout");
    EXPECT_NE(r.out.find("x</title></svg><img src=x onerror=alert(1)>"), std::string::npos)
        << "a terminal shows markup as it is";
    // Rejected rows and messages are sampled on stderr, escaped too; a 64 KB
    // callId is an oversized field, counted and sampled short.
    EXPECT_NE(r.err.find("<b>DONE</b>\\x1b[2J"), std::string::npos) << visibleText(r.err);
    EXPECT_NE(r.err.find("oversized field: callId of 65543 bytes"), std::string::npos);
    EXPECT_LT(r.err.size(), 8000u);
}

TEST(Hostile, JsonScanIsValidJsonHoldingTheExactStrings) {
    const CommandResult r = runCommand(cli("scan --since 1h --json"));
    ASSERT_EQ(r.exitCode, 0) << visibleText(r.err);
    expectTerminalSafe(r.out, "stdout");
    simdjson::dom::parser parser;
    std::set<std::string> callIds;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        simdjson::dom::element doc;
        ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS)
            << visibleText(line.substr(0, 200));
        simdjson::dom::array ids;
        if (doc["callIds"].get(ids) == simdjson::SUCCESS)
            for (auto id : ids)
                callIds.insert(std::string(std::string_view(id)));
    }
    // Valid UTF-8 comes back exactly; invalid bytes as U+FFFD; 64 KB is refused.
    for (const std::string& id : hostile().recordIds) {
        if (isValidUtf8(id) && id.size() < 1000) {
            EXPECT_TRUE(callIds.count(id)) << visibleText(id.substr(0, 80));
        }
    }
    EXPECT_TRUE(callIds.count(validUtf8(hostile().recordIds[6])));
}

TEST(Hostile, WatchTextAndJsonStayEscaped) {
    const std::string lines = runCommand(cli("scan --since 1h --json")).out;
    const std::size_t scanned = countOf(lines, "\"type\":\"anomaly\"");
    ASSERT_GT(scanned, 0u);
    for (const char* form : {"", " --json"}) {
        // Until it has printed what a scan finds.
        const CommandResult r = runUntil(cli(std::string("watch --since 1h") + form),
                                         *form ? "\"type\":\"anomaly\"" : "opened [", scanned);
        EXPECT_EQ(r.exitCode, 0) << visibleText(r.err);
        expectTerminalSafe(r.out, std::string("watch stdout") + form);
        expectTerminalSafe(r.err, std::string("watch stderr") + form);
        if (!*form)
            expectShownEscaped(r.out, "watch stdout");
        else
            EXPECT_NE(r.out.find("\\u001b[2J"), std::string::npos);
    }
}

TEST(Hostile, InspectOfAHostileCallIdShowsItEscaped) {
    for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u}) {
        const std::string& id = hostile().recordIds[i];
        const CommandResult r = runCommand(cli("inspect " + shellWord(id)));
        ASSERT_EQ(r.exitCode, 0) << visibleText(r.err);
        expectTerminalSafe(r.out, "inspect " + visibleText(id.substr(0, 60)));
        EXPECT_NE(r.out.find("callId " + visibleText(id)), std::string::npos)
            << visibleText(r.out.substr(0, 300));
        EXPECT_NE(r.out.find("stuck_processing"), std::string::npos);
    }
}

TEST(Hostile, ReportsInEveryFormatKeepDataAsText) {
    const TempFile html("hostile.html"), pdf("hostile.pdf"), json("hostile.json");
    for (const std::string& out : {html.path, pdf.path, json.path}) {
        const CommandResult r = runCommand(cli("report --since 1h -o " + out));
        ASSERT_EQ(r.exitCode, 0) << visibleText(r.err);
        expectTerminalSafe(r.err, "report stderr");
    }
    const std::string h = readFile(html.path);
    EXPECT_TRUE(isValidUtf8(h));
    for (const char* markup : {"<img", "<script", "</title></svg><img", "\x1b", "\u202E"})
        EXPECT_EQ(h.find(markup), std::string::npos) << visibleText(markup);
    EXPECT_NE(h.find("x&lt;/title&gt;&lt;/svg&gt;&lt;img src=x onerror=alert(1)&gt;"),
              std::string::npos);
    // Each SVG timeline is closed where it was opened, its title escaped.
    const std::size_t open = countOf(h, "<svg"), close = countOf(h, "</svg>");
    EXPECT_GT(open, 0u);
    EXPECT_EQ(open, close);
    EXPECT_NE(h.find("<title>timeline of h0:x&lt;/title&gt;"), std::string::npos);
    expectShownEscaped(h, "html");

    const CommandResult text = runCommand("pdftotext " + pdf.path + " -");
    ASSERT_EQ(text.exitCode, 0) << text.err;
    expectTerminalSafe(text.out, "pdf text");
    for (const char* shown : {"\\x1b[2J", "\\u202eexe.txt", "onerror=alert(1)"})
        EXPECT_NE(text.out.find(shown), std::string::npos) << shown;

    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    const std::string j = readFile(json.path);
    ASSERT_EQ(parser.parse(j).get(doc), simdjson::SUCCESS);
    EXPECT_NE(j.find("\\u001b[2J"), std::string::npos);
}
