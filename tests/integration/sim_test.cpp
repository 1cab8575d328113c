// The simulator against the real PostgreSQL and Kafka: every injected fault
// is really in the data, the truth file lists exactly what is there, and
// clean traffic holds none of the SPEC §3 situations.
#include "sim/bulk_fill.h"
#include "sim/simulator.h"
#include "sim_data.h"
#include "stack.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <chrono>
#include <cstdio>
#include <thread>

using namespace callscope;
using namespace callscope::test;

namespace {

struct SimRun {
    TestStack stack;
    SimResult result;
    SimData data;
    Situations truth;
    Situations found;
    EpochMillis end = 0; // when the simulator had drained
};

SimRun simulate(const std::string& name, SimOptions opt) {
    SimRun run{TestStack::fresh(name), {}, {}, {}, {}};
    const TestStack& stack = run.stack;
    opt.receiptTopic = stack.receiptTopic;
    opt.allowWritesTo = stack.database;
    opt.callerTopic = stack.callerTopic;
    opt.truthPath = tempPath(name + "-truth.jsonl");
    run.result = runSimulation(stack.config, opt);
    run.end = nowMillis();
    if (!run.result.ok)
        return run;
    run.truth = readAnomalyLines(readFile(opt.truthPath), true);
    std::remove(opt.truthPath.c_str());
    run.data = loadSimData(stack.dsn, stack.brokers, stack.receiptTopic, stack.callerTopic);
    run.found = findSituations(run.data);
    return run;
}

SimOptions shortRun() {
    SimOptions o;
    o.duration = Millis{3000};
    o.rate = 30;
    o.callers = 3;
    o.servers = 2;
    o.seed = 42;
    return o;
}

// `callscope scan --json` over the run, with thresholds short enough that
// every situation has passed them (the simulator drained before returning).
Situations scan(const SimRun& run) {
    waitPast(run.end + 1200); // past every 1 s threshold
    const TempFile config("scan.toml", readFile(run.stack.writeConfig(
                                           "[detect]\nstuck_after = \"1s\"\nreceipt_grace = "
                                           "\"1s\"\ncaller_alert_after = \"1s\"\n" +
                                           std::string(kSimProbe))));
    const CommandResult r =
        runCommand(callscopeBinary() + " scan --config " + config.path + " --since 10m --json");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find(R"({"type":"summary")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("rejectedMessages":0)"), std::string::npos) << r.out;
    return readAnomalyLines(r.out, true);
}

// What each injected kind brings along in the data, by the protocol itself.
std::set<std::string> companionsOf(AnomalyKind k) {
    if (k == AnomalyKind::KeyRotation) // the caller took the timeout for a failure
        return {"state_mismatch"};
    return {};
}

} // namespace

class SimFault : public ::testing::TestWithParam<AnomalyKind> {};

TEST_P(SimFault, InjectedSituationIsInTheDataAndTheTruthListsExactlyWhatIsThere) {
    const AnomalyKind kind = GetParam();
    const std::string name(toString(kind));
    SimOptions opt = shortRun();
    opt.faults[kind] = 0.2;
    const SimRun run = simulate(name, opt);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    EXPECT_EQ(run.result.stats.unfinishedCalls, 0);

    // The fault really happened, more than once.
    const Situations kinds = withoutCauses(run.truth);
    ASSERT_TRUE(kinds.count(name)) << "truth:\n" << describe(run.truth);
    EXPECT_GE(kinds.at(name).size(), 2u);
    // Every situation in the data is in the truth file, and nothing else.
    EXPECT_EQ(run.found, run.truth) << "found in the data:\n"
                                    << describe(run.found) << "truth:\n"
                                    << describe(run.truth);
    for (const auto& [k, _] : withoutCauses(run.found))
        EXPECT_TRUE(k == name || companionsOf(kind).count(k)) << "unexpected kind " << k;

    // callscope finds every injected anomaly and nothing on a clean callId.
    const Situations scanned = scan(run);
    EXPECT_EQ(scanned, run.truth) << "scan:\n"
                                  << describe(scanned) << "truth:\n"
                                  << describe(run.truth);
}

TEST_P(SimFault, FaultedCallsCarryTheEvidenceTheSpecNames) {
    const AnomalyKind kind = GetParam();
    const std::string name(toString(kind));
    SimOptions opt = shortRun();
    opt.duration = Millis{2000};
    opt.faults[kind] = 0.3;
    const SimRun run = simulate(name + "_ev", opt);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    const Situations kinds = withoutCauses(run.truth);
    ASSERT_TRUE(kinds.count(name));
    const SimData& d = run.data;
    for (const std::string& ids : kinds.at(name)) {
        const std::string first = ids.substr(0, ids.find(','));
        const auto& atts =
            d.attempts.count(first) ? d.attempts.at(first) : std::vector<AttemptRow>{};
        auto outcomes = [&](const std::string& o) {
            return std::count_if(atts.begin(), atts.end(),
                                 [&](const AttemptRow& a) { return a.outcome == o; });
        };
        switch (kind) {
        case AnomalyKind::StuckProcessing: // PROCESSING, an EXECUTED attempt, no terminal receipt
            ASSERT_TRUE(d.records.count(first));
            EXPECT_EQ(d.records.at(first).status, "PROCESSING");
            EXPECT_EQ(outcomes("EXECUTED"), 1);
            for (const auto& r :
                 d.receipts.count(first) ? d.receipts.at(first) : std::vector<ReceiptMsg>{})
                EXPECT_EQ(r.status, "PROCESSING");
            break;
        case AnomalyKind::DigestConflict:
            EXPECT_EQ(outcomes("DIGEST_CONFLICT"), 1);
            break;
        case AnomalyKind::DuplicateCaller:
            EXPECT_EQ(outcomes("REPLAYED"), 1);
            break;
        case AnomalyKind::KeyRotation: { // two callIds, one digest, both executed
            const std::string second = ids.substr(ids.find(',') + 1);
            ASSERT_TRUE(d.records.count(first) && d.records.count(second)) << ids;
            EXPECT_EQ(d.records.at(first).digest, d.records.at(second).digest);
            EXPECT_EQ(d.records.at(first).status, "SUCCESS");
            EXPECT_EQ(d.records.at(second).status, "SUCCESS");
            EXPECT_EQ(d.callerEvents.at(first).front().bizNo,
                      d.callerEvents.at(second).front().bizNo);
            break;
        }
        case AnomalyKind::ConcurrentExecution: // every retry executes again
            EXPECT_GE(outcomes("EXECUTED"), 2);
            break;
        case AnomalyKind::ExpiredReplay:
            EXPECT_EQ(outcomes("EXECUTED"), 2);
            EXPECT_LT(atts.front().arrivedAt, d.records.at(first).createdAt);
            break;
        case AnomalyKind::ReceiptMissing:
            EXPECT_EQ(d.records.at(first).status, "SUCCESS");
            break;
        case AnomalyKind::StateMismatch:
            EXPECT_EQ(d.records.at(first).status, "SUCCESS");
            EXPECT_EQ(d.callerEvents.at(first).back().state, "CONFIRMED_SUCCESS");
            break;
        case AnomalyKind::ReceiptRegression:
            EXPECT_EQ(d.callerEvents.at(first).back().state, "AWAITING_RECEIPT");
            break;
        case AnomalyKind::CallerStuck:
            EXPECT_EQ(d.callerEvents.at(first).back().state, "AWAITING_RECEIPT");
            EXPECT_EQ(d.records.at(first).status, "SUCCESS");
            break;
        case AnomalyKind::OrphanReceipt:
            EXPECT_FALSE(d.records.count(first));
            EXPECT_TRUE(d.receipts.count(first));
            break;
        case AnomalyKind::CallIdRewritten: { // the caller's id at the caller only, one trace
            const std::string second = ids.substr(ids.find(',') + 1);
            const bool firstIsCaller = d.callerEvents.count(first) != 0;
            const std::string& callerId = firstIsCaller ? first : second;
            const std::string& serverId = firstIsCaller ? second : first;
            ASSERT_TRUE(d.callerEvents.count(callerId) && d.attempts.count(serverId)) << ids;
            EXPECT_FALSE(d.records.count(callerId));
            EXPECT_FALSE(d.callerEvents.count(serverId));
            EXPECT_EQ(d.callerEvents.at(callerId).front().traceId,
                      d.attempts.at(serverId).front().traceId);
            EXPECT_EQ(d.records.at(serverId).status, "SUCCESS");
            break;
        }
        case AnomalyKind::EffectMissing: // SUCCESS, its bizNo has no business row
            EXPECT_EQ(d.records.at(first).status, "SUCCESS");
            EXPECT_FALSE(d.businessRows.count(d.callerEvents.at(first).front().bizNo));
            break;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryKind, SimFault, ::testing::ValuesIn([] {
                             std::vector<AnomalyKind> kinds;
                             for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
                                 kinds.push_back(static_cast<AnomalyKind>(i));
                             return kinds;
                         }()),
                         [](const auto& info) { return std::string(toString(info.param)); });

TEST(SimClean, CleanTrafficHoldsNoSituationEvenWithCrashesAndTimeouts) {
    SimOptions opt = shortRun();
    opt.duration = Millis{5000};
    opt.rate = 40;
    opt.crashRate = 0.05; // healthy recovery: stale re-occupation
    const SimRun run = simulate("clean", opt);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    EXPECT_TRUE(run.truth.empty()) << describe(run.truth);
    EXPECT_TRUE(run.found.empty()) << describe(run.found);
    const SimData& d = run.data;
    EXPECT_GE(d.records.size(), 100u);
    EXPECT_EQ(run.result.stats.unfinishedCalls, 0);

    // The protocol's normal paths all happened: timeouts and retries under the
    // same callId, replays, stale re-occupation, duplicate and out-of-order
    // receipt delivery — and every caller ended confirmed.
    std::map<std::string, int> outcomes;
    for (const auto& [_, atts] : d.attempts)
        for (const auto& a : atts)
            outcomes[a.outcome]++;
    EXPECT_GT(outcomes["EXECUTED"], 0);
    EXPECT_GT(outcomes["REOCCUPIED"], 0);
    EXPECT_GT(outcomes["IN_PROGRESS"] + outcomes["REPLAYED"], 0);
    EXPECT_GT(run.result.stats.timeouts, 0);
    int duplicates = 0, outOfOrder = 0, failed = 0;
    for (const auto& [id, recs] : d.receipts) {
        std::set<std::int64_t> versions;
        std::int64_t highest = 0;
        for (const auto& r : recs) {
            duplicates += !versions.insert(r.version).second;
            outOfOrder += r.version < highest;
            highest = std::max(highest, r.version);
        }
    }
    EXPECT_GT(duplicates, 0);
    EXPECT_GT(outOfOrder, 0); // the relay holds some PROCESSING receipts back
    for (const auto& [id, evs] : d.callerEvents) {
        EXPECT_EQ(evs.front().state, "INITIATED") << id;
        EXPECT_TRUE(evs.back().state == "CONFIRMED_SUCCESS" ||
                    evs.back().state == "CONFIRMED_FAILED")
            << id << " ended " << evs.back().state;
        failed += evs.back().state == "CONFIRMED_FAILED";
    }
    EXPECT_GT(failed, 0); // business failures are not anomalies
    for (const auto& [id, rec] : d.records)
        EXPECT_EQ(d.callerEvents.count(id), 1u) << id;

    const Situations scanned = scan(run);
    EXPECT_TRUE(scanned.empty()) << describe(scanned);
}

// 坑二: an async branch loses the callId and sends the same request under a
// new one, with no timeout: a key_rotation whose cause is callid_regenerated,
// told apart from the timed-out retry by the caller's own events.
TEST(SimFaultCause, RegeneratedCallIdIsAKeyRotationWithNoTimeoutBeforeIt) {
    SimOptions opt = shortRun();
    opt.regeneratedRate = 0.2;
    opt.faults[AnomalyKind::KeyRotation] = 0.1;
    const SimRun run = simulate("regenerated", opt);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    ASSERT_TRUE(run.truth.count("key_rotation/callid_regenerated")) << describe(run.truth);
    ASSERT_TRUE(run.truth.count("key_rotation/key_rotated_after_timeout")) << describe(run.truth);
    EXPECT_GE(run.truth.at("key_rotation/callid_regenerated").size(), 2u);
    for (const std::string& ids : run.truth.at("key_rotation/callid_regenerated"))
        for (std::size_t at = 0; at != std::string::npos;) {
            const std::size_t comma = ids.find(',', at);
            const std::string id = ids.substr(at, comma == std::string::npos ? comma : comma - at);
            for (const auto& e : run.data.callerEvents.at(id))
                EXPECT_NE(e.state, "TIMEOUT_UNKNOWN") << id;
            at = comma == std::string::npos ? comma : comma + 1;
        }
    EXPECT_EQ(run.found, run.truth) << "found:\n"
                                    << describe(run.found) << "truth:\n"
                                    << describe(run.truth);
    const Situations scanned = scan(run);
    EXPECT_EQ(scanned, run.truth) << "scan:\n"
                                  << describe(scanned) << "truth:\n"
                                  << describe(run.truth);
}

TEST(SimClean, EveryKindAtOnceStaysApartFromCleanCalls) {
    SimOptions opt = shortRun();
    opt.rate = 40;
    for (std::size_t i = 0; i < kAnomalyKindNames.size(); ++i)
        opt.faults[static_cast<AnomalyKind>(i)] = 0.03;
    opt.regeneratedRate = 0.03;
    opt.crashRate = 0.02;
    const SimRun run = simulate("all", opt);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    EXPECT_EQ(run.found, run.truth) << "found:\n"
                                    << describe(run.found) << "truth:\n"
                                    << describe(run.truth);
    const Situations scanned = scan(run);
    EXPECT_EQ(scanned, run.truth) << "scan:\n"
                                  << describe(scanned) << "truth:\n"
                                  << describe(run.truth);
}

namespace {

// A bulk fill into the stack's database and topics, key rotations at `rate`.
SimOptions bulkOptions(const TestStack& stack, const std::string& name, double rate, int seed) {
    SimOptions opt;
    opt.receiptTopic = stack.receiptTopic;
    opt.callerTopic = stack.callerTopic;
    opt.allowWritesTo = stack.database;
    opt.truthPath = tempPath(name + "-truth.jsonl");
    opt.faults[AnomalyKind::KeyRotation] = rate;
    opt.seed = seed;
    return opt;
}

} // namespace

// `sim --bulk-calls`: hours of history written at once (the benchmarks' data)
// is what the protocol leaves, and the scan finds exactly its key rotations.
TEST(SimBulk, HistoryWrittenAtOnceScansToExactlyItsTruth) {
    TestStack stack = TestStack::fresh("bulk");
    const SimOptions opt = bulkOptions(stack, "bulk", 0.01, 7);
    const SimResult r = runBulkFill(stack.config, opt, BulkFillOptions{3000, Millis{3'600'000}});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_GE(r.stats.calls, 3000);
    const Situations truth = readAnomalyLines(readFile(opt.truthPath), true);
    std::remove(opt.truthPath.c_str());
    ASSERT_TRUE(truth.count("key_rotation/key_rotated_after_timeout")) << describe(truth);

    const SimData data =
        loadSimData(stack.dsn, stack.brokers, stack.receiptTopic, stack.callerTopic);
    EXPECT_EQ(data.records.size(), static_cast<std::size_t>(r.stats.calls));
    EXPECT_EQ(findSituations(data), truth) << describe(findSituations(data));

    const TempFile config("bulk.toml", readFile(stack.writeConfig("")));
    const CommandResult scan =
        runCommand(callscopeBinary() + " scan --config " + config.path + " --since 1d --json");
    EXPECT_EQ(scan.exitCode, 0) << scan.err;
    EXPECT_NE(scan.out.find(R"("calls":)" + std::to_string(r.stats.calls) + ","), std::string::npos)
        << scan.out.substr(scan.out.rfind('\n', scan.out.size() - 2));
    const Situations scanned = readAnomalyLines(scan.out, true);
    EXPECT_EQ(scanned, truth) << "scan:\n" << describe(scanned) << "truth:\n" << describe(truth);
}

// A history too large to read at once (over 200k records): the record reader
// goes in slices sized by their rows, over the empty days before it in a jump;
// final calls leave memory (frozen) while the window loads, and the key
// rotations across them are still found, each call counted once.
TEST(SimBulk, ALargeHistoryIsReadInSlicesAndScansToExactlyItsTruth) {
    TestStack stack = TestStack::fresh("bulkbig");
    const SimOptions opt = bulkOptions(stack, "bulkbig", 0.0005, 11);
    const SimResult r =
        runBulkFill(stack.config, opt, BulkFillOptions{210'000, Millis{4 * 3'600'000}});
    ASSERT_TRUE(r.ok) << r.error;
    const Situations truth = readAnomalyLines(readFile(opt.truthPath), true);
    std::remove(opt.truthPath.c_str());
    ASSERT_TRUE(truth.count("key_rotation/key_rotated_after_timeout")) << describe(truth);
    {
        pqxx::connection c(stack.dsn);
        pqxx::nontransaction w(c);
        w.exec("ANALYZE"); // the table's size, which slicing goes by
    }

    const TempFile config("bulkbig.toml", readFile(stack.writeConfig("")));
    const CommandResult scan =
        runCommand(callscopeBinary() + " scan --config " + config.path + " --since 3d --json");
    EXPECT_EQ(scan.exitCode, 0) << scan.err;
    const std::string summary = scan.out.substr(scan.out.rfind('\n', scan.out.size() - 2));
    EXPECT_NE(summary.find(R"("calls":)" + std::to_string(r.stats.calls) + ","), std::string::npos)
        << summary;
    EXPECT_EQ(summary.find(R"("releasedCalls":0,)"), std::string::npos) << summary;
    const Situations scanned = readAnomalyLines(scan.out, true);
    EXPECT_EQ(scanned, truth) << "scan:\n" << describe(scanned) << "truth:\n" << describe(truth);
}

// The connection to PostgreSQL lost while the window loads (the server ends
// the session, as at a failover): the scan fails at once, says the
// connection was lost in words of the server's (not libpqxx's "check
// manually" about a transaction a read-only session never writes), and
// prints no summary of a window it did not read.
TEST(SimBulk, AConnectionLostWhileLoadingFailsTheScanNamingIt) {
    TestStack stack = TestStack::fresh("bulklost");
    const SimOptions opt = bulkOptions(stack, "bulklost", 0.0005, 13);
    const SimResult r =
        runBulkFill(stack.config, opt, BulkFillOptions{210'000, Millis{4 * 3'600'000}});
    ASSERT_TRUE(r.ok) << r.error;
    std::remove(opt.truthPath.c_str());
    pqxx::connection admin(stack.dsn);
    {
        pqxx::nontransaction w(admin);
        w.exec("ANALYZE");
    }

    const TempFile config("bulklost.toml", readFile(stack.writeConfig("")));
    CommandResult scan;
    std::thread run([&] {
        scan =
            runCommand(callscopeBinary() + " scan --config " + config.path + " --since 3d --json");
    });
    // Once the scan streams the records (a COPY of its session), its
    // sessions are ended (this test's database only: the other tests'
    // scans run beside it on the same server).
    bool ended = false;
    for (int polls = 0; polls < 6000 && !ended; ++polls) {
        pqxx::nontransaction w(admin);
        const auto rows = w.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                                 "datname = current_database() AND application_name = 'callscope' "
                                 "AND state = 'active' AND query LIKE 'COPY%'");
        ended = !rows.empty() && rows[0][0].as<bool>();
        if (!ended)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    run.join();
    ASSERT_TRUE(ended) << "the scan never streamed the records: " << scan.err;
    EXPECT_EQ(scan.exitCode, 1) << scan.err;
    EXPECT_NE(scan.err.find("PostgreSQL: connection lost"), std::string::npos) << scan.err;
    EXPECT_EQ(scan.err.find("check manually"), std::string::npos) << scan.err;
    EXPECT_EQ(scan.err.find("\\x0a"), std::string::npos) << scan.err;
    EXPECT_EQ(scan.out.find(R"("type":"summary")"), std::string::npos) << scan.out;
}
