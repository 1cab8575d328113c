// The callscope executable as a user runs it.
#include "stack.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace callscope::test;

namespace {
const std::string kBin = callscopeBinary();

// What sim needs of a config: the test's database, the brokers, its caller topic.
std::string simConfig(const TestStack& stack) {
    return "[postgres]\ndsn = \"" + stack.dsn + "\"\n[kafka]\nbrokers = \"" + stack.brokers +
           "\"\ncaller_topics = \"" + stack.callerTopic + "\"\n";
}
} // namespace

TEST(Cli, HelpListsEverySubcommand) {
    const CommandResult r = runCommand(kBin + " --help");
    EXPECT_EQ(r.exitCode, 0);
    for (const char* sub : {"gui", "scan", "watch", "inspect", "report", "demo", "sim"})
        EXPECT_NE(r.out.find(std::string("  ") + sub + " "), std::string::npos) << sub;
}

TEST(Cli, UnknownSubcommandOrOptionIsBadUsage) {
    EXPECT_EQ(runCommand(kBin + " frobnicate").exitCode, 2);
    const CommandResult r = runCommand(kBin + " sim --speed 3");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("callscope sim: The following arguments were not expected"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--speed"), std::string::npos) << r.err;
    const CommandResult f = runCommand(kBin + " sim --fault stuck=0.1");
    EXPECT_EQ(f.exitCode, 2);
    EXPECT_NE(f.err.find("unknown kind \"stuck\""), std::string::npos) << f.err;
}

TEST(Cli, BadConfigIsRefusedNamingFileLineAndKey) {
    const TempFile file("bad.toml",
                        "[postgres]\ndsn = \"host=x\"\n\n[detect]\nstuck_after = \"soon\"\n"
                        "[kafka]\nbrokerz = \"x\"\n");
    const std::string& path = file.path;
    for (const char* sub : {"scan", "watch", "inspect cid-1"}) {
        const CommandResult r = runCommand(kBin + " " + sub + " --since 1h --config " + path);
        EXPECT_EQ(r.exitCode, 2) << sub;
        EXPECT_NE(r.err.find(path + ":5: detect.stuck_after: expected a duration"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find(path + ":7: kafka.brokerz: unknown key"), std::string::npos) << r.err;
    }
}

TEST(Cli, SimFillsTheTablesAndTopicsAndWritesTheTruth) {
    TestStack stack = TestStack::fresh("cli");
    const TempFile config("sim.toml", simConfig(stack));
    const TempFile truth("cli-truth.jsonl");
    const CommandResult r = runCommand(kBin + " sim --config " + config.path +
                                       " --duration 2s --rate 25 --fault all=0.04" +
                                       " --receipt-topic " + stack.receiptTopic + " --truth " +
                                       truth.path + " --allow-writes " + stack.database);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.rfind(R"({"type":"sim_summary","calls":)", 0), 0u) << r.out;
    const std::string t = readFile(truth.path);
    EXPECT_NE(t.find(R"("type":"anomaly")"), std::string::npos) << t;
    const CommandResult rows =
        runCommand("psql -X -A -t -c 'select count(*) from idempotent_record' '" + stack.dsn + "'");
    ASSERT_EQ(rows.exitCode, 0) << rows.err;
    EXPECT_GT(std::stoi(rows.out), 20);
    const CommandResult msgs = runCommand("kcat -C -e -q -b " + stack.brokers + " -t " +
                                          stack.receiptTopic + " -f 'x\\n' | wc -l");
    EXPECT_GT(std::stoi(msgs.out), 20) << msgs.err;
}

// Pointed at a production config by mistake, sim writes nothing (issue 10):
// it needs --allow-writes naming the database the DSN connects to, and even
// then writes only into tables and topics it made itself.
TEST(Cli, SimRefusesToWriteWhereItWasNotToldToOrIntoWhatItDidNotMake) {
    TestStack stack = TestStack::fresh("cli_refuse");
    const TempFile config("refuse.toml", simConfig(stack));
    const std::string sim = kBin + " sim --config " + config.path + " --duration 1s --rate 5" +
                            " --receipt-topic " + stack.receiptTopic;
    const auto tables = [&] {
        return runCommand("psql -X -A -t -c \"select count(*) from pg_tables where tablename "
                          "like 'idempotent%' or tablename like 'callscope_sim%'\" '" +
                          stack.dsn + "'")
            .out;
    };
    // Not told at all, or told another name: refused before the first write.
    for (const std::string& extra : {std::string(), std::string(" --allow-writes orders")}) {
        const CommandResult r = runCommand(sim + extra);
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find("--allow-writes"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(stack.database), std::string::npos) << r.err;
        EXPECT_EQ(tables(), "0\n");
    }
    // The real tables of a deployment (no sim marker): refused, rows untouched.
    const std::string schema = std::string(CALLSCOPE_SOURCE_DIR) + "/resources/schema.sql";
    ASSERT_EQ(runCommand("psql -X -q -v ON_ERROR_STOP=1 -f " + schema + " '" + stack.dsn + "' && " +
                         "psql -X -q -c \"insert into idempotent_record values ('prod-1', "
                         "repeat('a',64), 'SUCCESS', null, 'api', 0, now(), now(), now() - "
                         "interval '1 day')\" '" +
                         stack.dsn + "'")
                  .exitCode,
              0);
    const CommandResult r = runCommand(sim + " --allow-writes " + stack.database);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("table idempotent_record"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("was not made by callscope sim"), std::string::npos) << r.err;
    EXPECT_EQ(
        runCommand("psql -X -A -t -c 'select call_id from idempotent_record' '" + stack.dsn + "'")
            .out,
        "prod-1\n"); // the expired production row was not deleted, nothing added
}

// A topic somebody else made is not the simulator's either.
TEST(Cli, SimRefusesATopicItDidNotCreateAndReusesItsOwn) {
    TestStack stack = TestStack::fresh("cli_topic");
    const TempFile config("topic.toml", simConfig(stack));
    const std::string sim = kBin + " sim --config " + config.path + " --duration 1s --rate 5" +
                            " --allow-writes " + stack.database + " --receipt-topic ";
    // Its own topics, twice: the second run finds them marked as its own.
    for (int run = 0; run < 2; ++run) {
        const CommandResult r = runCommand(sim + stack.receiptTopic);
        EXPECT_EQ(r.exitCode, 0) << r.err;
    }
    const std::string foreign = stack.receiptTopic + "-orders";
    ASSERT_EQ(runCommand("echo '{}' | kcat -P -b " + stack.brokers + " -t " + foreign).exitCode, 0);
    const CommandResult r = runCommand(sim + foreign);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("topic " + foreign + " exists and was not created by callscope sim"),
              std::string::npos)
        << r.err;
    const CommandResult msgs =
        runCommand("kcat -C -e -q -b " + stack.brokers + " -t " + foreign + " -f 'x\\n' | wc -l");
    EXPECT_EQ(std::stoi(msgs.out), 1) << msgs.err;
}

TEST(Cli, SimReportsAnUnreachableDatabaseAsARuntimeFailure) {
    const TempFile config(
        "down.toml", "[postgres]\ndsn = \"host=127.0.0.1 port=1 dbname=x user=x password=hunter2 "
                     "connect_timeout=2\"\n");
    const CommandResult r = runCommand(kBin + " sim --config " + config.path + " --duration 1s");
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("PostgreSQL"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
}
