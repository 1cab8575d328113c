// watch --exec's runner (app/exec_runner.cpp) with real processes: the JSON
// line on stdin and the bounded words in the environment, failures and
// timeouts counted (the whole process group killed), a full queue dropping
// rather than blocking.
#include "app/exec_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace callscope;

namespace {

std::string tempFile(const std::string& name) {
    return "/tmp/callscope-exec-" + std::to_string(::getpid()) + "-" + name;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

ExecRunner::Job job(const std::string& line) {
    return {line, "opened", "key_rotation", "critical"};
}

} // namespace

TEST(ExecRunner, EachChangeReachesTheCommandOnStdinWithItsWords) {
    const std::string out = tempFile("out");
    std::remove(out.c_str());
    {
        ExecRunner r(
            "{ cat; echo \" $CALLSCOPE_CHANGE $CALLSCOPE_KIND $CALLSCOPE_SEVERITY\"; } >> " + out,
            1, Millis{5000});
        EXPECT_TRUE(r.submit(job(R"({"a":1})")));
        EXPECT_TRUE(r.submit(job(R"({"a":2})")));
        r.finish(Millis{5000});
        const ExecStats s = r.stats();
        EXPECT_EQ(s.run, 2);
        EXPECT_EQ(s.failed, 0);
    }
    EXPECT_EQ(slurp(out), "{\"a\":1}\n opened key_rotation critical\n"
                          "{\"a\":2}\n opened key_rotation critical\n");
    std::remove(out.c_str());
}

TEST(ExecRunner, FailuresAndTimeoutsAreCountedAndTheGroupIsKilled) {
    const std::string pidFile = tempFile("child");
    ExecRunner r("exit 3", 2, Millis{5000});
    r.submit(job("{}"));
    // A command that starts a child and hangs: both are killed at the timeout.
    ExecRunner slow("sleep 60 & echo $! > " + pidFile + "; wait", 1, Millis{300});
    const auto started = std::chrono::steady_clock::now();
    slow.submit(job("{}"));
    slow.finish(Millis{10'000});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    const ExecStats s = slow.stats();
    EXPECT_EQ(s.failed, 1);
    EXPECT_EQ(s.timedOut, 1);
    EXPECT_EQ(s.lastFailure.rfind("killed after", 0), 0u) << s.lastFailure;
    const std::string child = slurp(pidFile);
    ASSERT_FALSE(child.empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // Gone, or a zombie waiting for whoever adopted it: not running.
    const std::string stat = slurp("/proc/" + std::to_string(std::stoi(child)) + "/stat");
    const bool running = !stat.empty() && stat.find(") Z ") == std::string::npos;
    EXPECT_FALSE(running) << "the command's own child was killed too: " << stat;
    std::remove(pidFile.c_str());
    r.finish(Millis{5000});
    EXPECT_EQ(r.stats().failed, 1);
    EXPECT_EQ(r.stats().lastFailure, "exit 3");
    EXPECT_EQ(r.takeNewFailures(), std::vector<std::string>{"exit 3"});
    EXPECT_TRUE(r.takeNewFailures().empty());
}

TEST(ExecRunner, AFullQueueDropsInsteadOfBlocking) {
    ExecRunner r("sleep 1", 1, Millis{5000}, 3);
    int accepted = 0;
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
        accepted += r.submit(job("{}"));
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500));
    EXPECT_LE(accepted, 4); // one running, three waiting
    EXPECT_GE(r.stats().dropped, 16);
    r.finish(Millis{0}); // what waits is dropped, what runs finishes
    EXPECT_LE(r.stats().run, 1);
}

TEST(ExecRunner, StoppingCutsARunningCommandShortAtTheDrain) {
    ExecRunner r("sleep 60", 1, Millis{60'000});
    r.submit(job("{}"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // it runs
    const auto started = std::chrono::steady_clock::now();
    r.finish(Millis{300});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
    EXPECT_EQ(r.stats().failed, 1);
    EXPECT_EQ(r.stats().timedOut, 0); // not its timeout: watch stopped
    EXPECT_EQ(r.stats().lastFailure.rfind("killed at shutdown", 0), 0u) << r.stats().lastFailure;
}
