#pragma once
// `watch --exec CMD` (issue 14): CMD runs through /bin/sh once per anomaly
// change with the change's JSON line on its stdin (and CALLSCOPE_CHANGE,
// CALLSCOPE_KIND, CALLSCOPE_SEVERITY in its environment: bounded words, never
// a callId). At most `concurrency` run at once, each killed (its whole process
// group) after `timeout`; changes beyond a full queue are dropped and counted.
// The watch loop only enqueues: a slow or hanging command never holds ingest.
#include "models/duration.h"
#include "models/observations.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace callscope {

struct ExecStats {
    std::int64_t run = 0, failed = 0, timedOut = 0, dropped = 0;
    std::int64_t notRun = 0; // still queued when watch stopped (after the drain)
    std::string lastFailure; // "exit 3", "killed after 10s", "cannot start: ..."
};

class ExecRunner {
public:
    struct Job {
        std::string line; // the JSON line, newline added on the way in
        std::string change, kind, severity;
    };
    ExecRunner(std::string command, int concurrency, Millis timeout, std::size_t maxQueued = 1000);
    ~ExecRunner(); // finishes what runs and what is queued, for at most `drainFor`

    // Never blocks: false (and counted as dropped) when the queue is full.
    bool submit(Job job);
    ExecStats stats() const;
    // Failures not yet reported (the caller prints them): since the last call.
    std::vector<std::string> takeNewFailures();
    // Stops taking jobs; what is queued runs for at most `drainFor`, then is dropped.
    void finish(Millis drainFor);

private:
    void worker();
    // Runs one job; "" on success, else why it failed.
    std::string runOne(const Job& job);

    const std::string m_command;
    const std::vector<std::string> m_environ; // ours, copied once (without the change's words)
    const Millis m_timeout;
    const std::size_t m_maxQueued;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Job> m_queue;
    bool m_stopping = false;
    EpochMillis m_drainUntil = kNoTime;
    ExecStats m_stats;
    std::vector<std::string> m_newFailures;
    std::vector<std::thread> m_workers;
};

} // namespace callscope
