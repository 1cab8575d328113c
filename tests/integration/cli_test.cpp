// The callscope executable as a user runs it.
#include "stack.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace callscope::test;

namespace {
const std::string kBin = callscopeBinary();
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
    EXPECT_NE(r.err.find("callscope sim: The following arguments were not expected"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--speed"), std::string::npos) << r.err;
    const CommandResult f = runCommand(kBin + " sim --fault stuck=0.1");
    EXPECT_EQ(f.exitCode, 2);
    EXPECT_NE(f.err.find("unknown kind \"stuck\""), std::string::npos) << f.err;
}

TEST(Cli, BadConfigIsRefusedNamingFileLineAndKey) {
    const TempFile file(
        "bad.toml", "[postgres]\ndsn = \"host=x\"\n\n[detect]\nstuck_after = \"soon\"\n"
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
    const TempFile config(
        "sim.toml", "[postgres]\ndsn = \"" + stack.dsn + "\"\n[kafka]\nbrokers = \"" +
                                    stack.brokers + "\"\ncaller_topics = \"" + stack.callerTopic +
                                    "\"\n");
    const TempFile truth("cli-truth.jsonl");
    const CommandResult r =
        runCommand(kBin + " sim --config " + config.path + " --duration 2s --rate 25 --fault all=0.04" +
                   " --receipt-topic " + stack.receiptTopic + " --truth " + truth.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.rfind(R"({"type":"sim_summary","calls":)", 0), 0u) << r.out;
    const std::string t = readFile(truth.path);
    EXPECT_NE(t.find(R"("type":"anomaly")"), std::string::npos) << t;
    const CommandResult rows = runCommand(
        "psql -X -A -t -c 'select count(*) from idempotent_record' '" + stack.dsn + "'");
    ASSERT_EQ(rows.exitCode, 0) << rows.err;
    EXPECT_GT(std::stoi(rows.out), 20);
    const CommandResult msgs = runCommand("kcat -C -e -q -b " + stack.brokers + " -t " +
                                          stack.receiptTopic + " -f 'x\\n' | wc -l");
    EXPECT_GT(std::stoi(msgs.out), 20) << msgs.err;
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
