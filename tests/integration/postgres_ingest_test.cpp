// PostgresSource against the real server with the rows real tables hold
// (issue 9): infinity and NaN, integer epoch seconds, bulk updates sharing
// one timestamp, writers whose clocks run ahead or behind, windows larger
// than statement_timeout, lookups from other threads while following.
#include "connectors/postgres_source.h"
#include "models/timestamp.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

using namespace callscope;
using namespace callscope::test;
using namespace std::chrono_literals;

namespace {

struct CollectingSink : ObservationSink {
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::string, RecordObservation> records; // latest per callId
    std::size_t recordRows = 0;
    std::vector<AttemptObservation> attempts;
    std::vector<Rejection> rejected;
    int healthy = 0, unhealthy = 0;

    void deliver(ObservationBatch&& b) override {
        std::lock_guard lock(mutex);
        for (auto& r : b.records) {
            ++recordRows;
            records[r.callId] = r;
        }
        for (auto& a : b.attempts)
            attempts.push_back(a);
        for (auto& r : b.rejected)
            rejected.push_back(r);
        changed.notify_all();
    }
    int polls = 0; // reads of the tables the follower has finished
    void recordCoverage(EpochMillis) override {
        std::lock_guard lock(mutex);
        ++polls;
        changed.notify_all();
    }
    // Waits until the follower has read the tables `n` more times.
    bool waitPolls(int n) {
        int from;
        {
            std::lock_guard lock(mutex);
            from = polls;
        }
        return waitFor([&] { return polls >= from + n; });
    }
    void health(const SourceHealth& h) override {
        std::lock_guard lock(mutex);
        healthy += h.connected;
        unhealthy += !h.connected;
        changed.notify_all();
    }
    template <typename Pred> bool waitFor(Pred pred, std::chrono::seconds limit = 30s) {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, limit, [&] { return pred(); });
    }
    bool has(const std::string& id) {
        std::lock_guard lock(mutex);
        return records.count(id) > 0;
    }
};

// Follows in a thread of its own until destroyed.
struct Follower {
    PostgresSource& source;
    CollectingSink& sink;
    std::atomic<bool> stop{false};
    std::thread thread;
    Follower(PostgresSource& s, CollectingSink& k)
        : source(s), sink(k), thread([this] { source.follow(sink, stop); }) {}
    ~Follower() {
        stop = true;
        thread.join();
    }
};

void exec(const std::string& dsn, const std::string& sql) {
    pqxx::connection c(dsn);
    pqxx::nontransaction w(c);
    w.exec(sql);
}

PostgresConfig recordsOnly(const TestStack& s, const std::string& table) {
    PostgresConfig p = s.config.postgres;
    p.record.table = table;
    p.attempt.enabled = false;
    p.pollInterval = Millis{100};
    return p;
}

const char* kRecordColumns =
    "call_id text PRIMARY KEY, request_digest text, status text, result_snapshot text, "
    "first_source text, lock_version int";

} // namespace

// 'infinity' (a record that never expires), -infinity, NaN and integer epoch
// seconds in an int4 column: the read goes on, out-of-range rows are counted
// as rejected, and nothing stops (it stopped with "cannot convert infinity to
// bigint", and int4 seconds * 1000 overflowed).
TEST(PostgresIngest, InfinityNanAndIntegerSecondsNeverStopTheRead) {
    const TestStack s = TestStack::fresh("pg_infinity");
    exec(s.dsn, std::string("CREATE TABLE rec_tz (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);"
                    "INSERT INTO rec_tz VALUES "
                    "('normal','d','SUCCESS','','i',1, now(), now(), now() + interval '1 day'),"
                    "('never-expires','d','SUCCESS','','i',1, now(), now(), 'infinity'),"
                    "('updated-infinity','d','SUCCESS','','i',1, now(), 'infinity', now()),"
                    "('created-minus-infinity','d','SUCCESS','','i',1, '-infinity', now(), now());"
                    "CREATE TABLE rec_epoch (" +
                    kRecordColumns +
                    ", created_at int, updated_at int, expire_at numeric);"
                    "INSERT INTO rec_epoch VALUES "
                    "('seconds','d','SUCCESS','','i',1, extract(epoch from now())::int, "
                    " extract(epoch from now())::int, 'NaN'),"
                    "('seconds-expiring','d','SUCCESS','','i',1, extract(epoch from now())::int, "
                    " extract(epoch from now())::int, extract(epoch from now()) + 3600);");
    const EpochMillis now = nowMillis();
    {
        PostgresSource source(recordsOnly(s, "rec_tz"));
        CollectingSink sink;
        std::atomic<bool> cancel{false};
        ASSERT_NO_THROW(source.loadWindow(now - 3'600'000, now + 60'000, sink, cancel));
        ASSERT_EQ(sink.records.size(), 2u);
        EXPECT_NE(sink.records.at("normal").expireAt, kNoTime);
        EXPECT_EQ(sink.records.at("never-expires").expireAt, kNoTime);
        ASSERT_EQ(sink.rejected.size(), 2u);
        std::set<std::string> samples;
        for (const auto& r : sink.rejected) {
            EXPECT_EQ(r.reason, "created_at/updated_at out of range");
            samples.insert(r.sample);
        }
        EXPECT_EQ(samples, (std::set<std::string>{"updated-infinity", "created-minus-infinity"}));

        // Following reads the same rows (through the incremental queries) and stays up.
        CollectingSink live;
        {
            Follower f(source, live);
            ASSERT_TRUE(live.waitFor([&] { return live.records.size() == 2; }));
        }
        EXPECT_EQ(live.records.count("never-expires"), 1u);
        EXPECT_EQ(live.unhealthy, 0);
    }
    {
        PostgresSource source(recordsOnly(s, "rec_epoch"));
        CollectingSink sink;
        std::atomic<bool> cancel{false};
        ASSERT_NO_THROW(source.loadWindow(now - 3'600'000, now + 60'000, sink, cancel));
        ASSERT_EQ(sink.records.size(), 2u);
        const auto& r = sink.records.at("seconds");
        EXPECT_NEAR(static_cast<double>(r.updatedAt), static_cast<double>(now), 5000.0);
        EXPECT_EQ(r.expireAt, kNoTime); // NaN
        EXPECT_NEAR(static_cast<double>(sink.records.at("seconds-expiring").expireAt),
                    static_cast<double>(now + 3'600'000), 5000.0);
    }
}

// Times are read from the server's text (issue 12: converting them on the
// server was a third of its work on a window), so the session's DateStyle and
// TimeZone are set by callscope: a database set to SQL/DMY and +05:45 reads
// the same instants to the millisecond (microseconds rounded half away from
// zero), a timestamp without zone is taken as UTC, and a year past 9999 or
// BC is out of range.
TEST(PostgresIngest, TimesAreExactWhateverTheDatabasesDateStyleAndTimeZone) {
    const TestStack s = TestStack::fresh("pg_times");
    exec(s.dsn, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET DateStyle = %L', "
                "current_database(), 'SQL, DMY'); EXECUTE format('ALTER DATABASE %I SET "
                "TimeZone = %L', current_database(), 'Asia/Kathmandu'); END $$");
    exec(s.dsn, std::string("CREATE TABLE rec_tz (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);"
                    "INSERT INTO rec_tz VALUES "
                    "('micros','d','SUCCESS','','i',1, '2024-05-20 10:29:03.1235+00',"
                    " '2024-05-20 12:00:00.0004+05:45', '10000-01-01 00:00:00+00'),"
                    "('ancient','d','SUCCESS','','i',1, '0044-03-15 12:00:00+00 BC',"
                    " '2024-05-20 10:00:00+00', NULL);"
                    "CREATE TABLE rec_plain (" +
                    kRecordColumns +
                    ", created_at timestamp, updated_at timestamp, expire_at timestamp);"
                    "INSERT INTO rec_plain VALUES "
                    "('nominal','d','SUCCESS','','i',1, '2024-05-20 10:29:03.9996',"
                    " '2024-05-20 10:29:03.9996', '2024-05-21 00:00:00');");
    const EpochMillis from = 1'716'163'200'000; // 2024-05-20 00:00:00 UTC
    const auto load = [&](const std::string& table, CollectingSink& sink) {
        PostgresSource source(recordsOnly(s, table));
        std::atomic<bool> cancel{false};
        source.loadWindow(from, from + 86'400'000, sink, cancel);
    };
    CollectingSink tz;
    ASSERT_NO_THROW(load("rec_tz", tz));
    ASSERT_EQ(tz.records.count("micros"), 1u);
    const auto& m = tz.records.at("micros");
    EXPECT_EQ(m.createdAt, from + 37'743'124); // 10:29:03.1235 -> .124
    EXPECT_EQ(m.updatedAt, from + 22'500'000); // 06:15:00.0004 UTC -> .000
    EXPECT_EQ(m.expireAt, kNoTime);            // year 10000
    ASSERT_EQ(tz.rejected.size(), 1u);
    EXPECT_EQ(tz.rejected[0].sample, "ancient");
    CollectingSink plain;
    ASSERT_NO_THROW(load("rec_plain", plain));
    ASSERT_EQ(plain.records.count("nominal"), 1u);
    EXPECT_EQ(plain.records.at("nominal").createdAt, from + 37'744'000); // .9996 -> next second
    EXPECT_EQ(plain.records.at("nominal").expireAt, from + 86'400'000);
}

// More rows share one updated_at (one bulk UPDATE) than a page holds: the
// feed pages through them by (updated_at, call_id) instead of re-reading the
// first page for ever.
TEST(PostgresIngest, BulkUpdateSharingOneTimestampIsReadThrough) {
    const TestStack s = TestStack::fresh("pg_bulk");
    exec(s.dsn, std::string("CREATE TABLE rec (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz)");
    PostgresSource source(recordsOnly(s, "rec"));
    CollectingSink sink;
    Follower f(source, sink);
    ASSERT_TRUE(sink.waitFor([&] { return sink.healthy > 0; }));
    exec(s.dsn, "INSERT INTO rec SELECT 'bulk-' || g, 'd', 'PROCESSING', '', 'i', 1, now(), now(), "
                "now() + interval '1 day' FROM generate_series(1, 210000) g");
    exec(s.dsn,
         "UPDATE rec SET status = 'SUCCESS', updated_at = clock_timestamp() + interval '1 s'");
    const bool all = sink.waitFor(
        [&] {
            if (sink.records.size() < 210'000)
                return false;
            for (const auto& [id, r] : sink.records)
                if (r.status != RecordStatus::Success)
                    return false;
            return true;
        },
        120s);
    EXPECT_TRUE(all) << sink.records.size() << " records";
}

// A row stamped by a writer whose clock runs an hour ahead does not move the
// cursor past rows committed later with true times (they were never read, and
// stuck_processing fired on calls that had finished).
TEST(PostgresIngest, ARowFromAClockRunningAheadDoesNotHideLaterRows) {
    const TestStack s = TestStack::fresh("pg_ahead");
    exec(s.dsn, std::string("CREATE TABLE rec (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz)");
    PostgresSource source(recordsOnly(s, "rec"));
    CollectingSink sink;
    Follower f(source, sink);
    ASSERT_TRUE(sink.waitFor([&] { return sink.healthy > 0; }));
    exec(s.dsn, "INSERT INTO rec VALUES ('ahead','d','SUCCESS','','i',1, now(), "
                "now() + interval '1 hour', now() + interval '1 day')");
    ASSERT_TRUE(sink.waitFor([&] { return sink.records.count("ahead") > 0; }));
    std::this_thread::sleep_for(500ms); // several polls with the row ahead
    exec(s.dsn, "INSERT INTO rec VALUES ('later','d','SUCCESS','','i',1, now(), now(), "
                "now() + interval '1 day')");
    EXPECT_TRUE(sink.waitFor([&] { return sink.records.count("later") > 0; }, 10s));
}

// A row that becomes visible minutes after its updated_at (a writer whose
// clock runs behind, a long transaction) is read within clock_skew's look-back.
TEST(PostgresIngest, RowCommittedMinutesAfterItsTimestampIsStillRead) {
    const TestStack s = TestStack::fresh("pg_behind");
    exec(s.dsn, std::string("CREATE TABLE rec (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz)");
    PostgresSource source(recordsOnly(s, "rec"));
    CollectingSink sink;
    Follower f(source, sink);
    ASSERT_TRUE(sink.waitFor([&] { return sink.healthy > 0; }));
    std::this_thread::sleep_for(300ms);
    exec(s.dsn, "INSERT INTO rec VALUES ('late','d','SUCCESS','','i',1, now() - interval '2 min', "
                "now() - interval '2 min', now() + interval '1 day')");
    EXPECT_TRUE(sink.waitFor([&] { return sink.records.count("late") > 0; }, 45s));
}

// A window that takes longer than statement_timeout to read is read whole
// (it was cancelled by the timeout on every retry).
TEST(PostgresIngest, WindowLongerThanStatementTimeoutIsRead) {
    const TestStack s = TestStack::fresh("pg_slow");
    exec(s.dsn,
         std::string("CREATE TABLE rec (") + kRecordColumns +
             ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);"
             "INSERT INTO rec SELECT 'slow-' || g, 'd', 'SUCCESS', '', 'i', 1, now(), now(), "
             "now() FROM generate_series(1, 400) g;"
             "CREATE FUNCTION slow(t text) RETURNS text LANGUAGE plpgsql VOLATILE AS "
             "$$BEGIN PERFORM pg_sleep(0.005); RETURN t; END$$;"
             "CREATE VIEW rec_slow AS SELECT slow(call_id) AS call_id, request_digest, status, "
             "result_snapshot, first_source, lock_version, created_at, updated_at, expire_at "
             "FROM rec");
    PostgresConfig p = recordsOnly(s, "rec_slow");
    p.statementTimeout = Millis{500}; // the window takes about 2 s
    PostgresSource source(p);
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    const EpochMillis now = nowMillis();
    const auto start = std::chrono::steady_clock::now();
    ASSERT_NO_THROW(source.loadWindow(now - 3'600'000, now + 60'000, sink, cancel));
    EXPECT_GT(std::chrono::steady_clock::now() - start, 1s); // longer than the timeout indeed
    EXPECT_EQ(sink.records.size(), 400u);
}

// Point lookups (a cold drill-down, a report's snapshots) from other threads
// while the follow thread reads: each on a connection of its own, results
// right, and a failing lookup does not disturb following.
TEST(PostgresIngest, LookupsFromOtherThreadsWhileFollowingUseTheirOwnConnection) {
    const TestStack s = TestStack::fresh("pg_threads");
    exec(s.dsn,
         std::string("CREATE TABLE rec (") + kRecordColumns +
             ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);"
             "INSERT INTO rec SELECT 'c-' || g, 'd', 'SUCCESS', 'snap-' || g, 'i', 1, now(), "
             "now(), now() FROM generate_series(1, 2000) g;");
    PostgresSource source(recordsOnly(s, "rec"));
    CollectingSink sink;
    Follower f(source, sink);
    std::atomic<bool> writing{true};
    std::thread writer([&] { // keeps the follow thread busy
        pqxx::connection c(s.dsn);
        for (int i = 0; writing; ++i) {
            pqxx::nontransaction w(c);
            w.exec("UPDATE rec SET updated_at = now(), lock_version = lock_version + 1 "
                   "WHERE call_id = 'c-" +
                   std::to_string(1 + i % 2000) + "'");
        }
    });
    int wrong = 0, failed = 0;
    std::vector<std::thread> lookers;
    for (int t = 0; t < 2; ++t)
        lookers.emplace_back([&, t] {
            for (int i = 1; i <= 150; ++i) {
                const std::string id = "c-" + std::to_string(1 + (i * 13 + t * 7) % 2000);
                try {
                    const ObservationBatch b = source.fetchCalls({id});
                    if (b.records.size() != 1 || b.records[0].callId != id)
                        ++wrong;
                    if (source.resultSnapshot(id) != "snap-" + id.substr(2))
                        ++wrong;
                } catch (const std::exception&) {
                    ++failed;
                }
            }
        });
    for (auto& l : lookers)
        l.join();
    writing = false;
    writer.join();
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(failed, 0);
    const std::size_t before = sink.recordRows;
    exec(s.dsn, "UPDATE rec SET updated_at = now() + interval '1 s' WHERE call_id = 'c-1'");
    EXPECT_TRUE(sink.waitFor([&] { return sink.recordRows > before; }, 10s));
    {
        pqxx::connection c(s.adminDsn);
        pqxx::nontransaction w(c);
        const auto n = w.exec("SELECT count(*) FROM pg_stat_activity WHERE datname = " +
                              w.quote(s.dsn.substr(s.dsn.find("dbname=") + 7,
                                                   s.dsn.find(' ', s.dsn.find("dbname=")) -
                                                       s.dsn.find("dbname=") - 7)) +
                              " AND application_name = 'callscope'")[0][0]
                           .as<int>();
        EXPECT_EQ(n, 2); // the follow thread's and the lookups'
    }
}

namespace {

const char* kAttemptTable =
    "CREATE TABLE att (id bigserial PRIMARY KEY, call_id text, request_digest text, "
    "source_instance text, trace_id text, outcome text, arrived_at timestamptz, "
    "finished_at timestamptz);"
    "INSERT INTO att (call_id, request_digest, source_instance, trace_id, outcome, arrived_at) "
    "SELECT 'a-' || g, 'd', 'i', '', 'EXECUTED', now() - interval '1 min' "
    "FROM generate_series(1, 300) g;";

std::size_t delivered(CollectingSink& sink) {
    std::lock_guard lock(sink.mutex);
    return sink.attempts.size();
}

PostgresConfig withAttempts(const TestStack& s, bool finishedAtMapped) {
    PostgresConfig p = recordsOnly(s, "rec");
    p.attempt.enabled = true;
    p.attempt.table = "att";
    if (!finishedAtMapped)
        p.attempt.finishedAt = "";
    return p;
}

} // namespace

// Unfinished attempts are re-read until they finish only when finished_at is
// mapped. Unmapped, an attempt never changes: every attempt id of the window
// went into an IN list on every poll before, and was delivered again each time.
TEST(PostgresIngest, AttemptsAreReReadOnlyWhileTheyCanStillFinish) {
    const TestStack s = TestStack::fresh("pg_attempts");
    exec(s.dsn, std::string("CREATE TABLE rec (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);" +
                    kAttemptTable);
    std::atomic<bool> cancel{false};
    const EpochMillis now = nowMillis();
    {
        PostgresSource source(withAttempts(s, false));
        CollectingSink sink;
        source.loadWindow(now - 3'600'000, now, sink, cancel);
        ASSERT_EQ(sink.attempts.size(), 300u);
        Follower f(source, sink);
        // Following starts with one look-back over clock_skew (the store
        // knows rows it has by id), then reads only what arrives.
        ASSERT_TRUE(sink.waitFor([&] { return sink.attempts.size() >= 600; }, 20s));
        ASSERT_TRUE(sink.waitPolls(15));
        EXPECT_EQ(delivered(sink), 600u) << "attempts delivered again while following";
    }
    {
        PostgresSource source(withAttempts(s, true));
        CollectingSink sink;
        source.loadWindow(now - 3'600'000, now, sink, cancel);
        ASSERT_EQ(sink.attempts.size(), 300u);
        Follower f(source, sink);
        exec(s.dsn, "UPDATE att SET finished_at = now() WHERE id % 2 = 0");
        const auto finished = [&] {
            std::size_t n = 0;
            for (const auto& a : sink.attempts)
                n += a.finishedAt != kNoTime;
            return n;
        };
        ASSERT_TRUE(sink.waitFor([&] { return finished() >= 150; }, 20s)) << finished();
        exec(s.dsn, "UPDATE att SET finished_at = now() WHERE id % 2 = 1");
        ASSERT_TRUE(sink.waitFor([&] { return finished() >= 300; }, 20s)) << finished();
        ASSERT_TRUE(sink.waitPolls(3)); // all finished: nothing is re-read any more
        const std::size_t settled = delivered(sink);
        ASSERT_TRUE(sink.waitPolls(10));
        EXPECT_EQ(delivered(sink), settled);
    }
}

// A cancelled lookup (the dashboard's Cancel on a cold drill-down, Ctrl-C on
// a report) stops on the server at once; it ran to the end before. The next
// lookup works.
TEST(PostgresIngest, ACancelledLookupStopsOnTheServer) {
    const TestStack s = TestStack::fresh("pg_cancel");
    exec(s.dsn, std::string("CREATE TABLE rec (") + kRecordColumns +
                    ", created_at timestamptz, updated_at timestamptz, expire_at timestamptz);"
                    "INSERT INTO rec VALUES ('slow','d','SUCCESS','','i',1, now(), now(), now()),"
                    "('fast','d','SUCCESS','','i',1, now(), now(), now());"
                    "CREATE FUNCTION slow_status(s text, id text) RETURNS text LANGUAGE plpgsql "
                    "VOLATILE AS $$BEGIN IF id = 'slow' THEN PERFORM pg_sleep(20); END IF; "
                    "RETURN s; END$$;"
                    "CREATE VIEW rec_v AS SELECT call_id, request_digest, "
                    "slow_status(status, call_id) AS status, result_snapshot, first_source, "
                    "lock_version, created_at, updated_at, expire_at FROM rec");
    PostgresSource source(recordsOnly(s, "rec_v"));
    source.connect();
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(300ms);
        cancel = true;
    });
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
        source.fetchCalls({"slow"}, &cancel);
    } catch (const SourceError& e) {
        error = e.what();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    canceller.join();
    EXPECT_EQ(error, "PostgreSQL: lookup cancelled");
    EXPECT_LT(took, 5s); // the query sleeps 20 s
    std::atomic<bool> never{false};
    const ObservationBatch b = source.fetchCalls({"fast"}, &never);
    ASSERT_EQ(b.records.size(), 1u);
    EXPECT_EQ(b.records[0].callId, "fast");
}

// Text columns declared character(n) hold their values padded with spaces.
// They are read bare (the server's cast to text, which trims them, cost a
// fifth of a window's read) and trimmed here as that cast would: callIds,
// digests, instances and words come out as written, in a window's read, in
// the follow feed's pages and in a lookup by callId.
// `domains`: "key=domain" of the mapped columns check names a domain for,
// comma-separated (every other mapped column has none).
static void expectPaddedColumnsReadTrimmed(const std::string& database, const std::string& tables,
                                           const std::string& domains = "") {
    const TestStack s = TestStack::fresh(database);
    exec(s.dsn,
         tables + "INSERT INTO rec VALUES ('padded-1', 'abc', 'SUCCESS', NULL, 'api-1', 1, "
                  "now() - interval '1 min', now() - interval '1 min', now() + interval '1 day');"
                  "INSERT INTO att (call_id, request_digest, source_instance, trace_id, outcome, "
                  "arrived_at, finished_at) VALUES ('padded-1', 'abc', 'api-1', 't-1', 'EXECUTED', "
                  "now() - interval '1 min', now() - interval '1 min')");
    const auto expectTrimmed = [](const ObservationBatch& b) {
        ASSERT_EQ(b.records.size(), 1u);
        EXPECT_EQ(b.records[0].callId, "padded-1");
        EXPECT_EQ(b.records[0].digest, "abc");
        EXPECT_EQ(b.records[0].status, RecordStatus::Success);
        EXPECT_EQ(b.records[0].firstSource, "api-1");
        ASSERT_EQ(b.attempts.size(), 1u);
        EXPECT_EQ(b.attempts[0].callId, "padded-1");
        EXPECT_EQ(b.attempts[0].digest, "abc");
        EXPECT_EQ(b.attempts[0].sourceInstance, "api-1");
        EXPECT_EQ(b.attempts[0].traceId, "t-1");
        EXPECT_EQ(b.attempts[0].outcome, AttemptOutcome::Executed);
        EXPECT_TRUE(b.rejected.empty()) << b.rejected.front().reason;
    };
    PostgresConfig p = recordsOnly(s, "rec");
    p.attempt.enabled = true;
    p.attempt.table = "att";
    PostgresSource source(p);
    std::atomic<bool> cancel{false};
    const EpochMillis now = nowMillis();
    {
        CollectingSink window;
        source.loadWindow(now - 3'600'000, now, window, cancel);
        ObservationBatch all;
        for (const auto& [id, r] : window.records)
            all.records.push_back(r);
        for (const auto& a : window.attempts)
            all.attempts.push_back(a);
        for (const auto& r : window.rejected)
            all.rejected.push_back(r);
        expectTrimmed(all);
    }
    expectTrimmed(source.fetchCalls({"padded-1"}, &cancel));
    const PostgresCheck check = source.check(5);
    std::string seenDomains;
    expectTrimmed(check.sample);              // (check's sample, decoded as callscope reads)
    for (const auto& rel : check.relations) { // (the window above was read in binary)
        EXPECT_EQ(rel.windowRead, "binary COPY") << rel.key;
        // A lookup by callId uses the character(n) column's index (compared
        // with text[], the column was cast to text and the table read whole).
        bool lookup = false;
        for (const auto& a : rel.access)
            if (a.what.rfind("lookup:", 0) == 0) {
                lookup = true;
                EXPECT_TRUE(a.indexed) << rel.key << ": " << a.what << " (" << a.plan << ")";
            }
        EXPECT_TRUE(lookup) << rel.key;
        // check shows the type read and, for a domain, the domain's name.
        for (const auto& col : rel.columns)
            if (!col.domain.empty())
                seenDomains += (seenDomains.empty() ? "" : ",") + col.key + "=" + col.domain;
    }
    EXPECT_EQ(seenDomains, domains);
    CollectingSink sink;
    Follower f(source, sink);
    ASSERT_TRUE(
        sink.waitFor([&] { return sink.records.count("padded-1") > 0 && !sink.attempts.empty(); }));
    std::lock_guard lock(sink.mutex);
    EXPECT_EQ(sink.records["padded-1"].digest, "abc");
    EXPECT_EQ(sink.attempts.front().sourceInstance, "api-1");
}

TEST(PostgresIngest, CharacterColumnsComeOutTrimmedAsTheirTextCastWould) {
    expectPaddedColumnsReadTrimmed(
        "pg_bpchar",
        "CREATE TABLE rec (call_id character(40) PRIMARY KEY, request_digest character(80), "
        "status character(12), result_snapshot text, first_source character(30), "
        "lock_version int, created_at timestamptz, updated_at timestamptz, "
        "expire_at timestamptz);"
        "CREATE TABLE att (id bigserial PRIMARY KEY, call_id character(40), "
        "request_digest character(80), source_instance character(30), trace_id character(20), "
        "outcome character(24), arrived_at timestamptz, finished_at timestamptz);"
        "CREATE INDEX ON att (call_id, arrived_at);");
}

TEST(PostgresIngest, DomainColumnsAreReadAsTheTypesTheyAreOver) {
    expectPaddedColumnsReadTrimmed(
        "pg_domains",
        "CREATE DOMAIN call_id_t AS character(40); CREATE DOMAIN order_call_id AS call_id_t;"
        "CREATE DOMAIN utc_time AS timestamptz; CREATE DOMAIN word AS character(24);"
        "CREATE TABLE rec (call_id order_call_id PRIMARY KEY, request_digest character(80), "
        "status word, result_snapshot text, first_source character(30), "
        "lock_version int, created_at utc_time, updated_at utc_time, expire_at utc_time);"
        "CREATE TABLE att (id bigserial PRIMARY KEY, call_id call_id_t, "
        "request_digest character(80), source_instance character(30), trace_id character(20), "
        "outcome word, arrived_at utc_time, finished_at utc_time);"
        "CREATE INDEX ON att (call_id, arrived_at);",
        "record.call_id=order_call_id,record.status=word,record.created_at=utc_time,"
        "record.updated_at=utc_time,record.expire_at=utc_time,attempt.call_id=call_id_t,"
        "attempt.outcome=word,attempt.arrived_at=utc_time,attempt.finished_at=utc_time");
}

// A time column of another type is a config error naming its key and type:
// text, or an array of timestamps (a domain over one included).
TEST(PostgresIngest, TimeColumnsOfOtherTypesAreRefusedNamingTheKey) {
    const TestStack s = TestStack::fresh("pg_time_types");
    exec(s.dsn, "CREATE DOMAIN stamps AS timestamptz[];"
                "CREATE TABLE rec_text (call_id text PRIMARY KEY, request_digest text, "
                "status text, result_snapshot text, first_source text, lock_version int, "
                "created_at timestamptz, updated_at text, expire_at timestamptz);"
                "CREATE TABLE rec_array (call_id text PRIMARY KEY, request_digest text, "
                "status text, result_snapshot text, first_source text, lock_version int, "
                "created_at timestamptz, updated_at stamps, expire_at timestamptz)");
    for (const auto& [table, type] : {std::pair<std::string, std::string>{"rec_text", "text"},
                                      {"rec_array", "timestamp with time zone[]"}}) {
        PostgresSource source(recordsOnly(s, table));
        CollectingSink sink;
        std::atomic<bool> cancel{false};
        try {
            source.loadWindow(nowMillis() - 60'000, nowMillis(), sink, cancel);
            ADD_FAILURE() << table << " was read";
        } catch (const SourceError& e) {
            EXPECT_TRUE(e.configError) << e.what();
            EXPECT_NE(std::string(e.what()).find("postgres.record.updated_at"), std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("has type " + type + ";"), std::string::npos)
                << e.what();
        }
    }
}

// A domain over an integer is an epoch column like its base: milliseconds in
// a domain over bigint, seconds in one over integer, bounded on the server.
TEST(PostgresIngest, DomainsOverEpochIntegersAreTimeColumns) {
    const TestStack s = TestStack::fresh("pg_epoch_domains");
    exec(s.dsn,
         std::string("CREATE DOMAIN epoch_ms AS bigint; CREATE DOMAIN epoch_s AS integer;"
                     "CREATE TABLE rec_dom (") +
             kRecordColumns +
             ", created_at epoch_ms, updated_at epoch_ms, expire_at epoch_s);"
             "INSERT INTO rec_dom VALUES "
             "('in-window','d','SUCCESS','','i',1, (extract(epoch from now()) * 1000)::bigint,"
             " (extract(epoch from now()) * 1000)::bigint, extract(epoch from now())::int + 3600),"
             "('too-old','d','SUCCESS','','i',1, 1000, 1000, 1);");
    const EpochMillis now = nowMillis();
    PostgresSource source(recordsOnly(s, "rec_dom"));
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    ASSERT_NO_THROW(source.loadWindow(now - 3'600'000, now + 60'000, sink, cancel));
    ASSERT_EQ(sink.records.size(), 1u);
    const auto& r = sink.records.at("in-window");
    EXPECT_NEAR(static_cast<double>(r.updatedAt), static_cast<double>(now), 5000.0);
    EXPECT_NEAR(static_cast<double>(r.expireAt), static_cast<double>(now + 3'600'000), 5000.0);
    EXPECT_TRUE(sink.rejected.empty());
}
