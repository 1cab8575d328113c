#include "stack.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace callscope::test {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v)
        throw std::runtime_error(std::string(name) +
                                 " is not set: start the stack first (eval \"$(scripts/stack "
                                 "start)\") or run scripts/test");
    return v;
}

std::atomic<int> g_counter{0};

} // namespace

std::string stackEnv(const char* name) {
    return env(name);
}

std::string withDatabase(const std::string& stackDsn, const std::string& db) {
    // The stack's DSNs are keyword/value with one dbname=... and their credentials.
    const std::size_t at = stackDsn.find("dbname=");
    if (at == std::string::npos)
        throw std::runtime_error("the stack's DSN names no dbname");
    const std::size_t end = std::min(stackDsn.find(' ', at), stackDsn.size());
    std::string dsn = stackDsn;
    dsn.replace(at, end - at, "dbname=" + db);
    return dsn;
}

TestStack TestStack::fresh(const std::string& name) {
    TestStack s;
    s.adminDsn = env("CALLSCOPE_PG_ADMIN_DSN");
    s.brokers = env("CALLSCOPE_KAFKA_BROKERS");
    const std::string unique =
        name + "_" + std::to_string(::getpid()) + "_" + std::to_string(g_counter.fetch_add(1));
    const std::string db = "t_" + unique;
    {
        pqxx::connection c(s.adminDsn);
        pqxx::nontransaction w(c);
        w.exec("DROP DATABASE IF EXISTS " + c.quote_name(db));
        w.exec("CREATE DATABASE " + c.quote_name(db));
    }
    s.dsn = withDatabase(s.adminDsn, db);
    s.database = db;
    s.receiptTopic = "receipts.t-" + unique;
    s.callerTopic = "caller-events.t-" + unique;
    s.config.postgres.dsn = s.dsn;
    s.config.kafka.brokers = s.brokers;
    // Its own topics only: the default regex would read every test's
    // receipts on the shared broker (tests run in parallel).
    s.config.kafka.receiptTopics = s.receiptTopic;
    s.config.kafka.callerTopics = s.callerTopic;
    return s;
}

// Config files written for a test binary's stacks, removed when it exits.
static std::vector<std::string>& writtenConfigs() {
    static struct Files {
        std::vector<std::string> paths;
        ~Files() {
            for (const std::string& p : paths)
                std::remove(p.c_str());
        }
    } files;
    return files.paths;
}

std::string TestStack::writeConfig(const std::string& extra,
                                   const std::string& postgresExtra) const {
    const std::string path = tempPath("callscope.toml");
    writtenConfigs().push_back(path);
    std::ofstream(path) << "[postgres]\ndsn = \"" << dsn << "\"\npoll_interval = \"200ms\"\n"
                        << postgresExtra << (postgresExtra.empty() ? "" : "\n")
                        << "[kafka]\nbrokers = \"" << brokers << "\"\nreceipt_topics = \""
                        << receiptTopic << "\"\ncaller_topics = \"" << callerTopic << "\"\n"
                        << extra;
    return path;
}

void restartService(const std::string& which) {
    const std::string script =
        std::string(CALLSCOPE_SOURCE_DIR) + "/scripts/stack restart-" + which;
    if (std::system(script.c_str()) != 0)
        throw std::runtime_error(script + " failed");
}

std::string callscopeBinary() {
    return CALLSCOPE_BINARY;
}

void createFailingSnapshotView(const std::string& dsn) {
    pqxx::connection c(dsn);
    pqxx::nontransaction w(c);
    w.exec("CREATE TABLE rec (call_id text PRIMARY KEY, request_digest text, status text, "
           "result_snapshot text, first_source text, lock_version int, created_at timestamptz, "
           "updated_at timestamptz, expire_at timestamptz);"
           "INSERT INTO rec VALUES ('boom', repeat('a', 64), 'PROCESSING', 'ok', 'api-1', 0, "
           "now() - interval '10 min', now() - interval '10 min', now() + interval '1 day');"
           "CREATE VIEW rec_v AS SELECT call_id, request_digest, status, "
           "(length(result_snapshot) / (length(call_id) - 4))::text AS result_snapshot, "
           "first_source, lock_version, created_at, updated_at, expire_at FROM rec");
}

std::string tempPath(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/callscope-test-" +
           std::to_string(::getpid()) + "-" + std::to_string(g_counter.fetch_add(1)) + "-" + name;
}

TempFile::TempFile(const std::string& name, const std::string& content) : path(tempPath(name)) {
    if (!content.empty())
        std::ofstream(path) << content;
}
TempFile::~TempFile() {
    std::remove(path.c_str());
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

CommandResult runCommand(const std::string& commandLine) {
    const std::string out = tempPath("stdout"), err = tempPath("stderr");
    const std::string full = "( " + commandLine + " ) >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(full.c_str());
    CommandResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(out);
    r.err = readFile(err);
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

void waitPast(EpochMillis t) {
    while (nowMillis() <= t)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

bool pollUntil(const std::function<bool()>& done, int limitMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limitMs);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

std::size_t countOf(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(needle, at)) != std::string::npos; ++at)
        ++n;
    return n;
}

CommandResult runUntil(const std::string& commandLine, const std::string& needle, std::size_t count,
                       int limitSeconds) {
    const std::string out = tempPath("stdout"), err = tempPath("stderr");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl("/bin/sh", "sh", "-c",
                ("exec " + commandLine + " >" + out + " 2>" + err + " </dev/null").c_str(),
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto seen = [&] { return countOf(readFile(out), needle); };
    int status = 0;
    bool ended = false; // by itself, before the condition
    for (int waited = 0; waited < limitSeconds * 10 && seen() < count; ++waited) {
        if ((ended = ::waitpid(pid, &status, WNOHANG) == pid))
            break;
        ::usleep(100'000);
    }
    if (!ended) {
        ::kill(pid, SIGINT);
        ::waitpid(pid, &status, 0);
    }
    CommandResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(out);
    r.err = readFile(err);
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

} // namespace callscope::test
