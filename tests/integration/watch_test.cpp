// callscope watch live, through a PostgreSQL restart and a Kafka broker
// restart: every injected anomaly is reported once, none is lost or doubled.
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

namespace {

// A loopback port nobody listens on now (asked of the kernel, then freed).
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// One number from Prometheus' HTTP API (the first result of an instant query).
std::optional<double> promQuery(int port, const std::string& query) {
    const CommandResult r =
        runCommand("curl -s -G --max-time 5 http://127.0.0.1:" + std::to_string(port) +
                   "/api/v1/query --data-urlencode 'query=" + query + "'");
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (r.exitCode != 0 || parser.parse(r.out).get(doc))
        return std::nullopt;
    simdjson::dom::array result;
    if (doc["data"]["result"].get_array().get(result) || result.size() == 0)
        return std::nullopt;
    std::string_view value;
    if (result.at(0)["value"].at(1).get_string().get(value))
        return std::nullopt;
    return std::stod(std::string(value));
}

std::size_t linesWith(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        n += line.find(needle) != std::string::npos;
    return n;
}

} // namespace

// watch --metrics scraped by a real Prometheus server, read back through its
// HTTP API; watch --exec given every change the JSON output holds.
TEST(WatchOut, PrometheusScrapesTheMetricsAndExecGetsEveryChange) {
    const TestStack s = TestStack::fresh("watchout");
    {
        SimOptions warm = part(1, s, "");
        warm.duration = Millis{200};
        warm.faults.clear();
        ASSERT_TRUE(runSimulation(s.config, warm).ok);
    }
    const int metricsPort = freePort(), promPort = freePort();
    const TempFile config("watchout.toml",
                          readFile(s.writeConfig("[detect]\nstuck_after = \"2s\"\nreceipt_grace = "
                                                 "\"2s\"\ncaller_alert_after = \"2s\"\n")));
    const TempFile out("watchout.out"), err("watchout.err"), execOut("exec.out");
    Child watch(callscopeBinary() + " watch --json --since 1m --config " + config.path +
                    " --metrics 127.0.0.1:" + std::to_string(metricsPort) + " --exec 'cat >> " +
                    execOut.path + "'",
                out.path, err.path);
    ASSERT_TRUE(pollUntil(
        [&] { return readFile(err.path).find("following live") != std::string::npos; }, 60'000))
        << readFile(err.path);

    const std::string promDir = tempPath("prometheus");
    const TempFile promConfig("prometheus.yml", "global:\n  scrape_interval: 1s\nscrape_configs:\n"
                                                "  - job_name: callscope\n    static_configs:\n"
                                                "      - targets: ['127.0.0.1:" +
                                                    std::to_string(metricsPort) + "']\n");
    const TempFile promOut("prom.out"), promErr("prom.err");
    Child prometheus("prometheus --config.file=" + promConfig.path + " --storage.tsdb.path=" +
                         promDir + " --web.listen-address=127.0.0.1:" + std::to_string(promPort),
                     promOut.path, promErr.path);

    SimOptions o = part(2, s, "");
    o.faults.clear();
    o.faults[AnomalyKind::KeyRotation] = 0.1;
    o.faults[AnomalyKind::DigestConflict] = 0.1;
    ASSERT_TRUE(runSimulation(s.config, o).ok);
    waitPast(nowMillis() + 3000); // past the 2 s thresholds

    // Prometheus has scraped what watch printed: the opened totals agree.
    double opened = 0;
    const bool agreed = pollUntil(
        [&] {
            opened = double(linesWith(readFile(out.path), "\"change\":\"opened\""));
            const auto scraped = promQuery(promPort, "sum(callscope_anomalies_opened_total)");
            return opened > 0 && scraped && *scraped == opened;
        },
        60'000);
    EXPECT_TRUE(agreed) << "watch opened " << opened << "; prometheus: "
                        << promQuery(promPort, "sum(callscope_anomalies_opened_total)").value_or(-1)
                        << "\n"
                        << readFile(promErr.path).substr(0, 2000);
    EXPECT_EQ(promQuery(promPort, "callscope_source_up{source=\"postgres\"}"), 1.0);
    EXPECT_EQ(promQuery(promPort, "callscope_source_up{source=\"kafka\"}"), 1.0);
    EXPECT_GT(promQuery(promPort, "callscope_anomalies_open{kind=\"key_rotation\","
                                  "severity=\"critical\"}")
                  .value_or(0),
              0.0);
    EXPECT_GT(promQuery(promPort, "sum(callscope_events_read_total)").value_or(0), 100.0);
    EXPECT_GT(promQuery(promPort, "callscope_store_bytes").value_or(0), 0.0);
    EXPECT_GT(promQuery(promPort, "sum(callscope_detection_delay_seconds_count)").value_or(0), 0.0);

    // The exposition itself: conventions, and no callId in any label.
    const CommandResult text = runCommand(
        "curl -s --max-time 5 http://127.0.0.1:" + std::to_string(metricsPort) + "/metrics");
    ASSERT_EQ(text.exitCode, 0);
    for (const char* needle :
         {"# TYPE callscope_anomalies_opened_total counter",
          "# TYPE callscope_anomalies_open gauge",
          "# TYPE callscope_detection_delay_seconds histogram", "callscope_build_info{version="})
        EXPECT_NE(text.out.find(needle), std::string::npos) << needle;
    EXPECT_EQ(text.out.find("cid-"), std::string::npos) << "a callId in a label";
    // The shipped alert rules are valid, and they and the Grafana dashboard
    // name only metrics watch serves.
    const std::string rules =
        std::string(CALLSCOPE_SOURCE_DIR) + "/resources/monitoring/callscope-alerts.yml";
    const CommandResult check = runCommand("promtool check rules " + rules);
    EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
    for (const std::string& file :
         {rules, std::string(CALLSCOPE_SOURCE_DIR) +
                     "/resources/monitoring/callscope-grafana-dashboard.json"}) {
        const std::string body = readFile(file);
        const std::regex name("callscope_[a-z_]+");
        for (auto it = std::sregex_iterator(body.begin(), body.end(), name);
             it != std::sregex_iterator(); ++it) {
            std::string metric = it->str();
            for (const char* suffix : {"_bucket", "_count", "_sum"})
                if (metric.size() > std::strlen(suffix) &&
                    metric.compare(metric.size() - std::strlen(suffix), std::string::npos,
                                   suffix) == 0)
                    metric.resize(metric.size() - std::strlen(suffix));
            if (metric == "callscope_rejected_messages_total")
                continue; // a series per reason: none until something is rejected
            EXPECT_NE(text.out.find("# TYPE " + metric + " "), std::string::npos)
                << file << " names " << metric << ", which watch does not serve";
        }
    }

    // Every change reached the command, once, after watch stopped and drained it.
    EXPECT_EQ(watch.terminate(), 0);
    EXPECT_EQ(linesWith(readFile(execOut.path), "\"change\":"),
              linesWith(readFile(out.path), "\"change\":"));
    EXPECT_GT(linesWith(readFile(execOut.path), "\"change\":\"opened\""), 0u);
    EXPECT_NE(readFile(err.path).find(" dropped"), std::string::npos) << readFile(err.path);
    prometheus.terminate();
    std::filesystem::remove_all(promDir);
}
