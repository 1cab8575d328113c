// Issue 10 against the real servers of scripts/stack: secrets never printed
// whatever form they are written in, TLS with verify-full and SASL_SSL, a
// wrong CA or password a clear error, and a role with SELECT on the two
// tables (and a Kafka principal with Describe + Read only) enough for every
// command, in a session that cannot write.
#include "sim/simulator.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <pqxx/pqxx>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

const std::string kShortThresholds =
    "[detect]\nstuck_after = \"1s\"\nreceipt_grace = \"1s\"\ncaller_alert_after = \"1s\"\n";

struct Secured {
    TestStack stack;
    std::string someCallId;    // a callId of the simulated data
    std::size_t anomalies = 0; // what a plaintext scan finds
};

std::size_t anomalyLines(const std::string& jsonLines) {
    return countOf(jsonLines, "\"type\":\"anomaly\"");
}

const Secured& secured() {
    static Secured* s = [] {
        auto* x = new Secured{TestStack::fresh("security"), {}, 0};
        SimOptions o;
        o.duration = Millis{2000};
        o.rate = 20;
        o.seed = 3;
        for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
            o.faults[static_cast<AnomalyKind>(i)] = 0.05;
        o.receiptTopic = x->stack.receiptTopic;
        o.callerTopic = x->stack.callerTopic;
        o.allowWritesTo = x->stack.database;
        const SimResult r = runSimulation(x->stack.config, o);
        if (!r.ok)
            throw std::runtime_error(r.error);
        // Past every threshold (1 s) and grace: what any later scan finds is final.
        waitPast(nowMillis() + 1200);
        pqxx::connection c(x->stack.dsn);
        pqxx::work w(c);
        x->someCallId =
            w.exec1("SELECT call_id FROM idempotent_record LIMIT 1")[0].as<std::string>();
        // The read-only role may read the two tables, nothing else.
        w.exec("GRANT SELECT ON idempotent_record, idempotent_attempt TO callscope_ro");
        w.commit();
        const CommandResult scan =
            runCommand(callscopeBinary() + " scan --json --since 1h --config " +
                       x->stack.writeConfig(kShortThresholds));
        if (scan.exitCode != 0)
            throw std::runtime_error(scan.err);
        x->anomalies = anomalyLines(scan.out);
        return x;
    }();
    return *s;
}

// A config for this test's database and topics through the stack's TLS and
// SASL_SSL listeners, with what differs given by the caller.
struct Secure {
    std::string dsn = withDatabase(stackEnv("CALLSCOPE_PG_TLS_DSN"), secured().stack.database);
    std::string mechanism = stackEnv("CALLSCOPE_KAFKA_SASL_MECHANISM");
    std::string user = stackEnv("CALLSCOPE_KAFKA_SASL_USER");
    std::string password = stackEnv("CALLSCOPE_KAFKA_SASL_PASSWORD");
    std::string ca = stackEnv("CALLSCOPE_CA_FILE");

    std::string write() const {
        const TestStack& s = secured().stack;
        const std::string path = tempPath("secure.toml");
        std::ofstream(path) << "[postgres]\ndsn = \"" << dsn << "\"\npoll_interval = \"200ms\"\n"
                            << "[kafka]\nbrokers = \"" << stackEnv("CALLSCOPE_KAFKA_SASL_BROKERS")
                            << "\"\nreceipt_topics = \"" << s.receiptTopic
                            << "\"\ncaller_topics = \"" << s.callerTopic << "\"\n"
                            << "[kafka.properties]\n\"security.protocol\" = \"SASL_SSL\"\n"
                            << "\"sasl.mechanisms\" = \"" << mechanism << "\"\n"
                            << "\"sasl.username\" = \"" << user << "\"\n"
                            << "\"sasl.password\" = \"" << password << "\"\n"
                            << "\"ssl.ca.location\" = \"" << ca << "\"\n"
                            << kShortThresholds;
        return path;
    }
};

void expectNoSecret(const std::string& text, const std::vector<std::string>& secrets,
                    const std::string& where) {
    for (const std::string& s : secrets)
        EXPECT_EQ(text.find(s), std::string::npos)
            << where << " shows a secret: " << text.substr(0, 400);
}

std::string pgPassword() {
    return stackEnv("CALLSCOPE_PG_PASSWORD");
}

} // namespace

TEST(TlsAndSasl, ScanAndWatchWorkOverVerifiedTlsAndSaslSsl) {
    ASSERT_GT(secured().anomalies, 0u);
    const Secure secure;
    const TempFile config("tls.toml");
    std::rename(secure.write().c_str(), config.path.c_str());
    const CommandResult scan =
        runCommand(callscopeBinary() + " scan --json --since 1h --config " + config.path);
    ASSERT_EQ(scan.exitCode, 0) << scan.err;
    EXPECT_EQ(anomalyLines(scan.out), secured().anomalies);
    const CommandResult watch =
        runUntil(callscopeBinary() + " watch --json --since 1h --config " + config.path,
                 "\"type\":\"anomaly\"", secured().anomalies);
    EXPECT_EQ(anomalyLines(watch.out), secured().anomalies) << watch.err;
    EXPECT_EQ(watch.err.find("DOWN"), std::string::npos) << watch.err;
    for (const CommandResult* r : {&scan, &watch})
        expectNoSecret(r->out + r->err, {pgPassword(), secure.password}, "tls run");
}

TEST(TlsAndSasl, AWrongCaOrPasswordIsAClearErrorNamingTheSource) {
    struct Case {
        const char* what;
        Secure secure;
        std::vector<std::string> expected;
    };
    std::vector<Case> cases;
    {
        Secure s;
        s.dsn = withDatabase(stackEnv("CALLSCOPE_PG_TLS_DSN"), secured().stack.database);
        s.dsn.replace(s.dsn.find(stackEnv("CALLSCOPE_CA_FILE")),
                      stackEnv("CALLSCOPE_CA_FILE").size(), stackEnv("CALLSCOPE_WRONG_CA_FILE"));
        cases.push_back({"PostgreSQL, wrong CA", s, {"PostgreSQL (", "certificate verify failed"}});
    }
    {
        Secure s;
        s.dsn.replace(s.dsn.find(pgPassword()), pgPassword().size(), "Wr0ngPassw0rd");
        cases.push_back(
            {"PostgreSQL, wrong password", s, {"PostgreSQL (", "password authentication failed"}});
    }
    {
        Secure s;
        s.password = "Wr0ngKafkaPassw0rd";
        cases.push_back({"Kafka, wrong password", s, {"Kafka (", "Authentication failed"}});
    }
    {
        Secure s;
        s.ca = stackEnv("CALLSCOPE_WRONG_CA_FILE");
        cases.push_back({"Kafka, wrong CA", s, {"Kafka (", "certificate verify failed"}});
    }
    if (rd_kafka_version() < 0x020601ff) {
        // Debian 12's librdkafka cannot do SCRAM with Kafka 4 (librdkafka#4895):
        // the error says so rather than blaming the right credentials.
        Secure s;
        s.mechanism = "SCRAM-SHA-512";
        cases.push_back(
            {"Kafka, SCRAM with librdkafka < 2.6.1", s, {"Kafka (", "librdkafka#4895"}});
    }
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        const TempFile config("bad.toml");
        std::rename(c.secure.write().c_str(), config.path.c_str());
        const CommandResult r =
            runCommand(callscopeBinary() + " scan --since 1h --config " + config.path);
        EXPECT_EQ(r.exitCode, 1) << r.err;
        for (const std::string& e : c.expected)
            EXPECT_NE(r.err.find(e), std::string::npos) << e << " in: " << r.err;
        expectNoSecret(r.out + r.err,
                       {pgPassword(), stackEnv("CALLSCOPE_KAFKA_SASL_PASSWORD"), "Wr0ngPassw0rd",
                        "Wr0ngKafkaPassw0rd"},
                       c.what);
    }
}

// The role callscope_ro has LOGIN and SELECT on the record and attempt tables,
// nothing more; the Kafka principal `callscope` may Describe and Read topics,
// with no group ACL. Every command works with both.
TEST(LeastPrivilege, SelectOnTheTwoTablesAndReadOnTheTopicsAreEnough) {
    Secure secure;
    secure.dsn = withDatabase(stackEnv("CALLSCOPE_PG_RO_DSN"), secured().stack.database) +
                 " sslmode=verify-full host=localhost sslrootcert=" + stackEnv("CALLSCOPE_CA_FILE");
    const TempFile config("ro.toml");
    std::rename(secure.write().c_str(), config.path.c_str());
    {
        pqxx::connection c(withDatabase(stackEnv("CALLSCOPE_PG_RO_DSN"), secured().stack.database));
        pqxx::nontransaction w(c);
        EXPECT_FALSE(
            w.exec1("SELECT has_table_privilege('callscope_sim_outbox', 'SELECT')")[0].as<bool>());
        EXPECT_FALSE(
            w.exec1("SELECT has_table_privilege('idempotent_record', 'INSERT')")[0].as<bool>());
        EXPECT_FALSE(
            w.exec1("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].as<bool>());
    }
    const std::string cs = callscopeBinary();
    const CommandResult scan = runCommand(cs + " scan --json --since 1h --config " + config.path);
    ASSERT_EQ(scan.exitCode, 0) << scan.err;
    EXPECT_EQ(anomalyLines(scan.out), secured().anomalies);
    const CommandResult inspect =
        runCommand(cs + " inspect " + secured().someCallId + " --json --config " + config.path);
    ASSERT_EQ(inspect.exitCode, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("\"type\":\"call\""), std::string::npos);
    const TempFile report("ro-report.json");
    const CommandResult rep = runCommand(cs + " report --since 1h --include-payloads -o " +
                                         report.path + " --config " + config.path);
    ASSERT_EQ(rep.exitCode, 0) << rep.err;
    EXPECT_NE(readFile(report.path).find("\"anomalies\""), std::string::npos);
    const CommandResult watch = runUntil(cs + " watch --json --since 1h --config " + config.path,
                                         "\"type\":\"anomaly\"", secured().anomalies);
    EXPECT_EQ(anomalyLines(watch.out), secured().anomalies) << watch.err;
    EXPECT_EQ(watch.err.find("DOWN"), std::string::npos) << watch.err;
}

// Even with a superuser's DSN, callscope's sessions cannot write: the record
// table is a view that writes into a log table for every row it returns, and
// reading it fails in the read-only transaction, the log staying empty.
TEST(LeastPrivilege, EverySessionIsReadOnly) {
    TestStack s = TestStack::fresh("readonly");
    {
        pqxx::connection c(s.dsn);
        pqxx::work w(c);
        createFailingSnapshotView(s.dsn); // the table `rec`, one stuck record 'boom'
        w.exec("CREATE TABLE written (at timestamptz);"
               "CREATE FUNCTION write_probe() RETURNS boolean LANGUAGE sql VOLATILE AS "
               "$$ INSERT INTO written VALUES (now()) RETURNING true $$;"
               "CREATE VIEW rec_probe AS SELECT * FROM rec WHERE write_probe()");
        w.commit();
    }
    const std::string config = s.writeConfig(
        "[postgres.record]\ntable = \"rec_probe\"\n[postgres.attempt]\nenabled = false\n");
    for (const std::string& args : {std::string("scan --since 1h"), std::string("inspect boom")}) {
        SCOPED_TRACE(args);
        const CommandResult r = runCommand(callscopeBinary() + " " + args + " --config " + config);
        EXPECT_NE(r.exitCode, 0);
        EXPECT_NE(r.err.find("read-only transaction"), std::string::npos) << r.err;
    }
    pqxx::connection c(s.dsn);
    pqxx::nontransaction w(c);
    EXPECT_EQ(w.exec1("SELECT count(*) FROM written")[0].as<int>(), 0);
}

// Every form a secret can take in a config, through every command: none of
// stdout, stderr, the report files (and the PDF's text) holds it.
TEST(Secrets, NoCommandPrintsASecretInAnyForm) {
    const TestStack& s = secured().stack;
    const std::string pw = pgPassword();
    const std::string port = stackEnv("CALLSCOPE_PG_PORT");
    const std::vector<std::string> fakes = {"FakeSslPass1", "fa ke2",      "FakeSasl3",
                                            "FakeKeyPass4", "FakeBearer5", "FakeStorePass6"};
    const std::vector<std::string> dsns = {
        s.dsn, // keyword form, password=...
        "postgresql://postgres:" + pw + "@127.0.0.1:" + port + "/" + s.database +
            "?sslpassword=FakeSslPass1",
        "postgresql://postgres@127.0.0.1:" + port + "/" + s.database + "?password=" + pw,
        "host=127.0.0.1 port=" + port + " dbname=" + s.database + " user=postgres password = '" +
            pw + "' sslpassword='fa ke2'",
    };
    const std::string kafka =
        "[kafka.properties]\n\"sasl.password\" = \"FakeSasl3\"\n\"ssl.key.password\" = "
        "\"FakeKeyPass4\"\n\"sasl.oauthbearer.config\" = \"principal=p secret=FakeBearer5\"\n"
        "\"ssl.keystore.password\" = \"FakeStorePass6\"\n";
    std::vector<std::string> secrets = fakes;
    secrets.push_back(pw);
    const std::string cs = callscopeBinary();
    for (const std::string& dsn : dsns) {
        SCOPED_TRACE(dsn.substr(0, 20));
        TestStack t = s;
        t.dsn = dsn;
        const std::string config = t.writeConfig(kafka + kShortThresholds);
        const TempFile html("s.html"), pdf("s.pdf"), json("s.json");
        std::string all;
        for (const std::string& args : std::vector<std::string>{
                 "scan --since 1h", "scan --json --since 1h", "inspect " + secured().someCallId,
                 "inspect --json " + secured().someCallId, "report --since 1h -o " + html.path,
                 "report --since 1h --include-payloads -o " + pdf.path,
                 "report --since 1h -o " + json.path, "sim --duration 1s --allow-writes nope"}) {
            const CommandResult r = runCommand(cs + " " + args + " --config " + config);
            if (args.rfind("sim", 0) == 0)
                EXPECT_EQ(r.exitCode, 2) << r.err;
            else
                EXPECT_EQ(r.exitCode, 0) << args << ": " << r.err;
            all += r.out + r.err;
        }
        const CommandResult watch =
            runUntil(cs + " watch --since 1h --config " + config, "opened", secured().anomalies);
        all += watch.out + watch.err;
        all += readFile(html.path) + readFile(json.path) +
               runCommand("pdftotext " + pdf.path + " -").out;
        EXPECT_NE(all.find("user=postgres"), std::string::npos) << "the DSN is shown, redacted";
        expectNoSecret(all, secrets, "outputs");
    }
    // The same forms with a wrong password: the connect errors hold no secret.
    for (const std::string& dsn :
         std::vector<std::string>{"postgresql://postgres:Wr0ngPw9@127.0.0.1:" + port + "/x",
                                  "host=127.0.0.1 port=" + port +
                                      " dbname=x user=postgres "
                                      "password=Wr0ngPw9 sslpassword=FakeSslPass1"}) {
        TestStack t = s;
        t.dsn = dsn;
        const CommandResult r =
            runCommand(cs + " scan --since 1h --config " + t.writeConfig(kafka) + " 2>&1; " + cs +
                       " inspect x --config " + t.writeConfig(kafka));
        EXPECT_NE(r.out.find("password authentication failed"), std::string::npos) << r.out;
        expectNoSecret(r.out + r.err, {"Wr0ngPw9", "FakeSslPass1", "FakeSasl3"}, "errors");
    }
}
