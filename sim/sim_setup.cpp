// The simulator's safety checks before its first write: a database it was
// named, tables and topics it made itself (each carries its marker), the
// reference schema and its outbox created when missing.
#include "sim/sim_setup.h"

#include "connectors/secrets.h"
#include "sim/kafka_writer.h"
#include "sim/sim_schema.h"
#include "sim/simulator.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <exception>

namespace callscope::sim {
namespace {

// What marks a table or a topic as the simulator's own: the comment on its
// tables, and a row per topic it created in callscope_sim_topics.
constexpr const char* kSimMarker = "callscope sim: synthetic data, safe to delete";
constexpr const char* kSimTables[] = {"idempotent_record", "idempotent_attempt",
                                      "callscope_sim_outbox", "callscope_sim_topics",
                                      "callscope_sim_orders"};

} // namespace

bool prepareDatabase(const std::string& dsn, const std::string& allowWritesTo, std::string& error,
                     bool& refused) {
    const std::vector<std::string> secrets = dsnSecrets(dsn);
    try {
        pqxx::connection c(dsn);
        const std::string db = c.dbname();
        if (allowWritesTo.empty()) {
            error = "sim writes synthetic records into the database \"" + db +
                    "\" and deletes expired ones: say that it may with --allow-writes " + db;
            refused = true;
            return false;
        }
        if (allowWritesTo != db) {
            error = "--allow-writes names \"" + allowWritesTo +
                    "\" but the config's DSN connects to \"" + db + "\": nothing was written";
            refused = true;
            return false;
        }
        pqxx::work w(c);
        for (const char* table : kSimTables) {
            const pqxx::row r =
                w.exec_params1("SELECT to_regclass($1) IS NOT NULL, "
                               "coalesce(obj_description(to_regclass($1), 'pg_class'), '')",
                               std::string(table));
            if (r[0].as<bool>() && r[1].as<std::string>() != kSimMarker) {
                error = "table " + std::string(table) + " in database \"" + db +
                        "\" was not made by callscope sim (it carries no sim marker): sim writes "
                        "only into tables it created; point it at a database of its own";
                refused = true;
                return false;
            }
        }
        w.exec(std::string(kReferenceSchemaSql));
        w.exec(std::string(kSimOutboxSql));
        w.exec("CREATE TABLE IF NOT EXISTS callscope_sim_topics (topic text PRIMARY KEY, "
               "created_at timestamptz NOT NULL DEFAULT now())");
        // The business table the simulated server writes with each SUCCESS
        // (a [probe] reads it: effect_missing).
        w.exec("CREATE TABLE IF NOT EXISTS callscope_sim_orders (order_no text PRIMARY KEY, "
               "call_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
        for (const char* table : kSimTables)
            w.exec("COMMENT ON TABLE " + w.quote_name(table) + " IS " + w.quote(kSimMarker));
        w.commit();
        return true;
    } catch (const std::exception& e) {
        error = "PostgreSQL (" + redactDsn(dsn) + "): " + scrubSecrets(e.what(), secrets);
        return false;
    }
}

bool claimTopics(const std::string& dsn, const std::vector<std::string>& created,
                 const std::vector<std::string>& existed, std::string& error, bool& refused) {
    try {
        pqxx::connection c(dsn);
        pqxx::work w(c);
        for (const std::string& t : created)
            w.exec_params("INSERT INTO callscope_sim_topics (topic) VALUES ($1) "
                          "ON CONFLICT DO NOTHING",
                          t);
        bool ok = true;
        for (const std::string& t : existed)
            if (ok &&
                w.exec_params("SELECT 1 FROM callscope_sim_topics WHERE topic = $1", t).empty()) {
                error = "topic " + t +
                        " exists and was not created by callscope sim: sim writes "
                        "only into topics it created; name another with --receipt-topic / "
                        "--caller-topic";
                ok = false;
                refused = true;
            }
        w.commit();
        return ok;
    } catch (const std::exception& e) {
        error = "PostgreSQL (" + redactDsn(dsn) + "): " + scrubSecrets(e.what(), dsnSecrets(dsn));
        return false;
    }
}

bool prepareTargets(const Config& config, const SimOptions& opt, const std::string& callerTopic,
                    SimResult& result) {
    if (!prepareDatabase(config.postgres.dsn, opt.allowWritesTo, result.error, result.refused))
        return false;
    if (!opt.createTopics)
        return true;
    const KafkaSettings ks{config.kafka.brokers, config.kafka.properties, config.kafka.partitioner};
    std::vector<std::string> topics{opt.receiptTopic};
    if (!callerTopic.empty())
        topics.push_back(callerTopic);
    std::vector<std::string> existed;
    if (!ensureTopics(ks, topics, opt.partitions, result.error, &existed)) {
        result.error = "Kafka (" + config.kafka.brokers + "): " + result.error;
        return false;
    }
    std::vector<std::string> created;
    for (const std::string& t : topics)
        if (std::find(existed.begin(), existed.end(), t) == existed.end())
            created.push_back(t);
    return claimTopics(config.postgres.dsn, created, existed, result.error, result.refused);
}

} // namespace callscope::sim
