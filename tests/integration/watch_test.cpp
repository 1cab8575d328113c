// callscope watch live, through a PostgreSQL restart and a Kafka broker
// restart: every injected anomaly is reported once, none is lost or doubled.
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace callscope;
using namespace callscope::test;

namespace {

// A child process whose stdout and stderr go to files.
class Child {
public:
    Child(const std::string& commandLine, const std::string& out, const std::string& err) {
        m_pid = ::fork();
        if (m_pid == 0) {
            ::setpgid(0, 0);
            const std::string full =
                "exec " + commandLine + " >" + out + " 2>" + err + " </dev/null";
            ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    ~Child() {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    int terminate() {
        ::kill(m_pid, SIGTERM);
        int status = 0;
        for (int i = 0; i < 300; ++i) {
            if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
                m_pid = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return -2;
    }

private:
    pid_t m_pid = -1;
};

SimOptions part(int seed, const TestStack& s, const std::string& truth) {
    SimOptions o;
    o.duration = Millis{3000};
    o.rate = 30;
    o.seed = static_cast<std::uint64_t>(seed);
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
        o.faults[static_cast<AnomalyKind>(i)] = 0.03;
    o.receiptTopic = s.receiptTopic;
    o.callerTopic = s.callerTopic;
    o.allowWritesTo = s.database;
    o.truthPath = truth;
    return o;
}

} // namespace

TEST(Watch, SurvivesPostgresAndKafkaRestartsWithNothingLostOrDoubled) {
    const TestStack s = TestStack::fresh("watch");
    // Topics exist before watch starts; thresholds leave room for live lag.
    {
        SimOptions warm = part(1, s, "");
        warm.duration = Millis{200};
        warm.faults.clear();
        ASSERT_TRUE(runSimulation(s.config, warm).ok);
    }
    const TempFile config("watch.toml",
                          readFile(s.writeConfig("[detect]\nstuck_after = \"4s\"\nreceipt_grace = "
                                                 "\"4s\"\ncaller_alert_after = \"4s\"\n" +
                                                 std::string(kSimProbe))));
    const TempFile out("watch.out"), err("watch.err");
    Child watch(callscopeBinary() + " watch --config " + config.path + " --since 1m --json",
                out.path, err.path);
    ASSERT_TRUE(pollUntil(
        [&] { return readFile(err.path).find("following live") != std::string::npos; }, 60'000))
        << readFile(err.path);

    Situations truth;
    const auto run = [&](int seed) {
        const TempFile t("truth.jsonl");
        const SimResult r = runSimulation(s.config, part(seed, s, t.path));
        ASSERT_TRUE(r.ok) << r.error;
        for (const auto& [kind, sets] : readAnomalyLines(readFile(t.path)))
            truth[kind].insert(sets.begin(), sets.end());
    };
    run(11);
    restartService("postgres");
    run(12);
    restartService("kafka");
    run(13);
    const EpochMillis end = nowMillis();
    // Past every threshold, the watch has reported everything; a lost message
    // would never show, so give up after a generous minute.
    std::map<std::string, int> opened;
    Situations openedSet;
    std::string lines;
    const auto collect = [&] {
        opened.clear();
        openedSet.clear();
        lines = readFile(out.path);
        simdjson::dom::parser parser;
        std::istringstream in(lines);
        std::string line;
        while (std::getline(in, line)) {
            simdjson::dom::element doc;
            if (parser.parse(line).get(doc))
                continue; // a line being written
            std::string ids;
            for (auto v : doc["callIds"].get_array())
                ids += (ids.empty() ? "" : ",") + std::string(std::string_view(v.get_string()));
            const std::string kind(std::string_view(doc["kind"].get_string()));
            const std::string change(std::string_view(doc["change"].get_string()));
            if (change == "opened") {
                opened[kind + ":" + ids]++;
                openedSet[kind].insert(ids);
            }
            EXPECT_NE(change, "resolved") << line;
        }
    };
    waitPast(end + 5000); // past every 4 s threshold: each anomaly has opened (once)
    pollUntil(
        [&] {
            collect();
            return openedSet == truth;
        },
        60'000);
    EXPECT_EQ(watch.terminate(), 0);
    collect();
    const std::string errors = readFile(err.path);
    for (const auto& [k, n] : opened)
        EXPECT_EQ(n, 1) << k << " opened " << n << " times";
    EXPECT_EQ(openedSet, truth) << "watch:\n"
                                << describe(openedSet) << "truth:\n"
                                << describe(truth) << "stderr:\n"
                                << errors;
    // The outages were seen and the sources came back.
    EXPECT_NE(errors.find("postgres DOWN"), std::string::npos) << errors;
    EXPECT_NE(errors.find("postgres connected"), std::string::npos) << errors;
    EXPECT_NE(errors.find("kafka DOWN"), std::string::npos) << errors;
}
