#include "app/exec_runner.h"

#include "models/duration.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>
#include <utility>

extern char** environ;

namespace callscope {

namespace {

// Our environment, without the words each change sets.
std::vector<std::string> ownEnvironment() {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view v(*e);
        if (v.rfind("CALLSCOPE_CHANGE=", 0) != 0 && v.rfind("CALLSCOPE_KIND=", 0) != 0 &&
            v.rfind("CALLSCOPE_SEVERITY=", 0) != 0)
            env.emplace_back(v);
    }
    return env;
}

// The environment of the command: ours, and the change's bounded words.
std::vector<std::string> environmentFor(std::vector<std::string> env, const ExecRunner::Job& job) {
    env.push_back("CALLSCOPE_CHANGE=" + job.change);
    env.push_back("CALLSCOPE_KIND=" + job.kind);
    env.push_back("CALLSCOPE_SEVERITY=" + job.severity);
    return env;
}

// Writes all of `text` to a non-blocking fd before `deadline`; false if not.
bool writeAll(int fd, const std::string& text, EpochMillis deadline) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN)
            return false; // EPIPE: the command does not read its stdin, which is its business
        const EpochMillis left = deadline - nowMillis();
        if (left <= 0)
            return false;
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, static_cast<int>(std::min<EpochMillis>(left, 100)));
    }
    return true;
}

} // namespace

ExecRunner::ExecRunner(std::string command, int concurrency, Millis timeout, std::size_t maxQueued)
    : m_command(std::move(command)), m_environ(ownEnvironment()), m_timeout(timeout),
      m_maxQueued(maxQueued) {
    for (int i = 0; i < std::max(1, concurrency); ++i)
        m_workers.emplace_back([this] { worker(); });
}

ExecRunner::~ExecRunner() {
    finish(Millis{0});
}

bool ExecRunner::submit(Job job) {
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping || m_queue.size() >= m_maxQueued) {
            m_stats.dropped++;
            return false;
        }
        job.line += '\n';
        m_queue.push_back(std::move(job));
    }
    m_wake.notify_one();
    return true;
}

ExecStats ExecRunner::stats() const {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

std::vector<std::string> ExecRunner::takeNewFailures() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_newFailures, {});
}

void ExecRunner::finish(Millis drainFor) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_stopping) {
            m_stopping = true;
            m_drainUntil = nowMillis() + drainFor.count();
        }
    }
    m_wake.notify_all();
    for (auto& t : m_workers)
        t.join();
    m_workers.clear();
}

void ExecRunner::worker() {
    // A command that exits without reading its stdin: EPIPE on this thread's
    // write, never a SIGPIPE that would end watch (the block is this thread's).
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty())
                return;
            if (m_stopping && nowMillis() > m_drainUntil) {
                m_stats.notRun += static_cast<std::int64_t>(m_queue.size());
                m_queue.clear();
                return;
            }
            job = std::move(m_queue.front());
            m_queue.pop_front();
        }
        const std::string failure = runOne(job);
        std::lock_guard lock(m_mutex);
        m_stats.run++;
        if (!failure.empty()) {
            m_stats.failed++;
            m_stats.timedOut += failure.rfind("killed after", 0) == 0;
            m_stats.lastFailure = failure;
            if (m_newFailures.size() < 100)
                m_newFailures.push_back(failure);
        }
    }
}

std::string ExecRunner::runOne(const Job& job) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0)
        return std::string("cannot start: pipe: ") + std::strerror(errno);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0); // the JSON line on stdin
    posix_spawn_file_actions_adddup2(&actions, 2, 1);     // its output beside ours, off stdout
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // A group of its own: a timeout kills everything the command started.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    std::vector<std::string> env = environmentFor(m_environ, job);
    std::vector<char*> envp;
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string sh = "/bin/sh", dashC = "-c", cmd = m_command;
    char* argv[] = {sh.data(), dashC.data(), cmd.data(), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    if (rc != 0) {
        ::close(in[1]);
        return std::string("cannot start: ") + std::strerror(rc);
    }
    EpochMillis deadline = nowMillis() + m_timeout.count();
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    writeAll(in[1], job.line, deadline);
    ::close(in[1]);
    // Whether the command has exited, leaving it a zombie: its pid, and so
    // its process group's id, cannot be reused before we reap it.
    const auto exited = [pid] {
        siginfo_t info{};
        return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
    };
    bool killed = false, cut = false;
    while (!exited()) {
        {
            // Stopping: what runs gets what is left of the drain, not its timeout.
            std::lock_guard lock(m_mutex);
            if (m_stopping && m_drainUntil < deadline) {
                deadline = m_drainUntil;
                cut = true;
            }
        }
        if (nowMillis() >= deadline) {
            ::kill(-pid, SIGTERM);
            const EpochMillis grace = nowMillis() + 2000;
            while (!exited() && nowMillis() < grace)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            killed = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (killed)
        ::kill(-pid, SIGKILL); // the rest of the group (the leader, if it is still there)
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (killed)
        return cut ? std::string("killed at shutdown (still running when watch stopped)")
                   : "killed after " + formatDuration(m_timeout);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    if (WIFEXITED(status))
        return "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "signal " + std::to_string(WTERMSIG(status));
    return "failed";
}

} // namespace callscope
