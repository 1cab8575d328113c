// The example adapters of resources/examples/ (issue 16): a Stripe-style
// idempotency_keys table and a Powertools-style table, each read through
// the view its directory defines, with its callscope.toml, by the read-only
// role. Key rotation and stuck records are found; nothing comes from the
// sources such a deployment does not have.
#include "stack.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <fstream>
#include <regex>

using namespace callscope;
using namespace callscope::test;

namespace {

std::string exampleFile(const std::string& example, const std::string& file) {
    return std::string(CALLSCOPE_SOURCE_DIR) + "/resources/examples/" + example + "/" + file;
}

// A fresh database holding the example's table, view and sample rows, and
// the example's config pointed at it as callscope_ro (SELECT on the view only).
struct Adapter {
    TestStack stack;
    std::string config;

    explicit Adapter(const std::string& example) : stack(TestStack::fresh(example)) {
        pqxx::connection c(stack.dsn);
        pqxx::nontransaction w(c);
        for (const char* file : {"schema.sql", "view.sql", "sample.sql"})
            w.exec(readFile(exampleFile(example, file)));
        const std::string dsn = withDatabase(stackEnv("CALLSCOPE_PG_RO_DSN"), stack.database);
        const std::string text =
            std::regex_replace(readFile(exampleFile(example, "callscope.toml")),
                               std::regex("\ndsn = \"[^\"]*\""), "\ndsn = \"" + dsn + "\"");
        config = tempPath(example + ".toml");
        std::ofstream(config) << text;
    }
    ~Adapter() { std::remove(config.c_str()); }

    CommandResult scan() const {
        return runCommand(callscopeBinary() + " scan --json --since 2h --config " + config);
    }
};

// The kinds a PostgreSQL-only adapter cannot judge: none of them may fire.
const char* const kAbsent[] = {"receipt_missing",    "orphan_receipt", "caller_stuck",
                               "receipt_regression", "state_mismatch", "concurrent_execution",
                               "duplicate_caller",   "digest_conflict"};

void expectOnlyTheTable(const CommandResult& r) {
    for (const char* kind : kAbsent) {
        EXPECT_EQ(countOf(r.out, std::string("\"kind\":\"") + kind + "\""), 0u) << kind;
        EXPECT_NE(r.out.find(std::string("\"") + kind + "\":\""), std::string::npos)
            << kind << " is listed as off";
    }
    EXPECT_NE(r.out.find("\"rejectedMessages\":0,"), std::string::npos)
        << "every row of the view fits the mapping";
}

void expectCheckReady(const Adapter& a) {
    const CommandResult r = runCommand(callscopeBinary() + " check --config " + a.config);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    for (const char* needle : {"record  callscope_idempotent_record (view, ", "user callscope_ro",
                               "read-only session: yes", "indexed  follow: records changed",
                               "indexed  lookup: a record by callId", "Kafka  not read",
                               "Detections that will run (3): stuck_processing, key_rotation, "
                               "expired_replay",
                               "\nready"})
        EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
    EXPECT_NE(r.out.find(" decoded, 0 rejected"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("    rejected "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("warning: "), std::string::npos) << "SELECT on the view only\n" << r.out;
}

} // namespace

TEST(Adapters, AStripeStyleKeyTableThroughAView) {
    const Adapter a("stripe");
    expectCheckReady(a);
    {
        // Without the index on the view's call_id expression, a lookup by
        // callId scans the table: check says so and which index would serve.
        pqxx::connection c(a.stack.dsn);
        pqxx::nontransaction w(c);
        w.exec("DROP INDEX idempotency_keys_call_id");
        const CommandResult r = runCommand(callscopeBinary() + " check --config " + a.config);
        EXPECT_EQ(r.exitCode, 0) << r.out;
        EXPECT_NE(r.out.find("NO INDEX lookup: a record by callId"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("add an index on the table behind the view "
                             "callscope_idempotent_record, on what the view gives as (call_id)"),
                  std::string::npos)
            << r.out;
        w.exec(readFile(exampleFile("stripe", "schema.sql"))); // puts it back
    }
    const CommandResult r = a.scan();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // User 1001 retried the same ride under a new key, and both ran.
    EXPECT_EQ(countOf(r.out, "\"kind\":\"key_rotation\""), 1u) << r.out;
    EXPECT_NE(r.out.find(R"("severity":"critical","state":"open","callIds":["1001:)"),
              std::string::npos)
        << r.out;
    // User 1003's key stopped at ride_created 15 minutes ago.
    EXPECT_EQ(countOf(r.out, "\"kind\":\"stuck_processing\""), 1u) << r.out;
    EXPECT_NE(r.out.find("\"callIds\":[\"1003:"), std::string::npos) << r.out;
    expectOnlyTheTable(r);
    // The same ride booked by user 1002 is a request of its own.
    EXPECT_EQ(r.out.find("\"1002:"), std::string::npos) << r.out;
}

TEST(Adapters, APowertoolsStyleTableWithEpochSecondExpiry) {
    const Adapter a("powertools");
    expectCheckReady(a);
    const CommandResult r = a.scan();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // One payment under keys k-1001-a and k-1001-b, both COMPLETED.
    EXPECT_EQ(countOf(r.out, "\"kind\":\"key_rotation\""), 1u) << r.out;
    EXPECT_NE(r.out.find("\"kind\":\"key_rotation\",\"severity\":\"critical\""), std::string::npos)
        << r.out;
    // INPROGRESS for 15 minutes, and EXPIRED without a saved response.
    EXPECT_EQ(countOf(r.out, "\"kind\":\"stuck_processing\""), 2u) << r.out;
    expectOnlyTheTable(r);
    // The expiry, epoch seconds in a bigint, reads as a time an hour after creation.
    pqxx::connection c(a.stack.dsn);
    pqxx::nontransaction w(c);
    const std::string id =
        w.exec("SELECT call_id FROM callscope_idempotent_record WHERE status = 'COMPLETED' "
               "ORDER BY created_at LIMIT 1")[0][0]
            .as<std::string>();
    const CommandResult one =
        runCommand(callscopeBinary() + " inspect '" + id + "' --json --config " + a.config);
    ASSERT_EQ(one.exitCode, 0) << one.err;
    EXPECT_NE(one.out.find("\"status\":\"SUCCESS\""), std::string::npos) << one.out;
    // expiration, epoch seconds in a bigint, is created_at + 3600 s to the second.
    const auto row =
        w.exec("SELECT to_char(to_timestamp(expire_at) AT TIME ZONE 'UTC', "
               "'YYYY-MM-DD\"T\"HH24:MI:SS.000\"Z\"') FROM callscope_idempotent_record "
               "WHERE call_id = " +
               w.quote(id));
    const std::string expires = "\"expireAt\":\"" + row[0][0].as<std::string>() + "\"";
    EXPECT_NE(one.out.find(expires), std::string::npos) << expires << "\n" << one.out;
}
