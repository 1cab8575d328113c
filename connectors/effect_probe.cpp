#include "connectors/effect_probe.h"

#include "connectors/secrets.h"

#include <pqxx/pqxx>

namespace callscope {

struct EffectProbe::Session {
    pqxx::connection conn;
    explicit Session(const std::string& dsn) : conn(dsn) {}
};

EffectProbe::EffectProbe(const PostgresConfig& postgres, const ProbeConfig& probe)
    : m_postgres(postgres), m_probe(probe), m_secrets(dsnSecrets(postgres.dsn)) {}

EffectProbe::~EffectProbe() = default;

namespace {
std::string withConnectTimeout(std::string dsn) {
    if (dsn.find("://") == std::string::npos && dsn.find("connect_timeout") == std::string::npos)
        dsn += " connect_timeout=5";
    return dsn;
}
} // namespace

bool EffectProbe::explain(Plan& plan, std::string& error) {
    try {
        pqxx::connection c(withConnectTimeout(m_postgres.dsn));
        pqxx::nontransaction w(c);
        w.exec("SET default_transaction_read_only = on; SET statement_timeout = 10000");
        w.exec("PREPARE callscope_probe_check AS " + m_probe.sql);
        for (const auto& row : w.exec("EXPLAIN EXECUTE callscope_probe_check(" +
                                      w.quote("callscope-check-key") + ")")) {
            plan.lines.push_back(row[0].as<std::string>());
            plan.scansWholeTable |= plan.lines.back().find("Seq Scan") != std::string::npos;
        }
        return true;
    } catch (const std::exception& e) {
        error = scrubSecrets(e.what(), m_secrets);
        return false;
    }
}

std::optional<bool> EffectProbe::exists(const std::string& key, std::string& error) {
    try {
        if (!m_session) {
            m_session = std::make_unique<Session>(withConnectTimeout(m_postgres.dsn));
            const Millis timeout = m_probe.statementTimeout.count() > 0
                                       ? m_probe.statementTimeout
                                       : m_postgres.statementTimeout;
            pqxx::nontransaction w(m_session->conn);
            // Read-only like every callscope session: the probe's SQL is the
            // deployment's, and it may only read.
            w.exec("SET default_transaction_read_only = on; SET statement_timeout = " +
                   std::to_string(timeout.count()) +
                   "; SET application_name = 'callscope probe'");
            w.commit();
            m_session->conn.prepare("effect_probe", m_probe.sql);
        }
        pqxx::read_transaction t(m_session->conn);
        const pqxx::result r = t.exec_prepared("effect_probe", key);
        t.commit();
        return !r.empty();
    } catch (const std::exception& e) {
        m_session.reset();
        error = "probe (" + redactDsn(m_postgres.dsn) + "): " + scrubSecrets(e.what(), m_secrets);
        return std::nullopt;
    }
}

} // namespace callscope
