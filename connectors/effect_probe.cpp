#include "connectors/effect_probe.h"

#include "connectors/secrets.h"

#include <pqxx/pqxx>

#include <cctype>

namespace callscope {

struct EffectProbe::Session {
    pqxx::connection conn;
    explicit Session(const std::string& dsn) : conn(dsn) {}
};

EffectProbe::EffectProbe(const PostgresConfig& postgres, const ProbeConfig& probe)
    : m_postgres(postgres), m_probe(probe), m_secrets(dsnSecrets(postgres.dsn)) {}

EffectProbe::~EffectProbe() = default;

namespace {
std::string trimmed(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.pop_back();
    return text;
}

} // namespace

bool EffectProbe::explain(Plan& plan, std::string& error) {
    try {
        pqxx::connection c(dsnWithConnectTimeout(m_postgres.dsn));
        // Prepared by the protocol: one statement only, never a script.
        c.prepare("callscope_probe_check", m_probe.sql);
        pqxx::read_transaction t(c);
        t.exec("SET LOCAL statement_timeout = 10000");
        // Run once with a NULL key: a statement that writes fails here, in a
        // read-only transaction, whatever it would have matched.
        t.exec_prepared("callscope_probe_check", nullptr);
        // The plan every probe will use, not one for a sample key.
        t.exec("SET LOCAL plan_cache_mode = force_generic_plan");
        for (const auto& row : t.exec("EXPLAIN EXECUTE callscope_probe_check(NULL)")) {
            plan.lines.push_back(row[0].as<std::string>());
            plan.scansWholeTable |= plan.lines.back().find("Seq Scan") != std::string::npos;
        }
        t.commit();
        return true;
    } catch (const std::exception& e) {
        error = trimmed(scrubSecrets(e.what(), m_secrets));
        return false;
    }
}

void EffectProbe::cancel() {
    std::lock_guard lock(m_sessionMutex);
    if (m_session) {
        try {
            m_session->conn.cancel_query(); // PQcancel: safe from another thread
        } catch (const std::exception&) {
            // Nothing running, or the server is gone: nothing to cancel.
        }
    }
}

std::optional<bool> EffectProbe::exists(const std::string& key, std::string& error) {
    try {
        if (!m_session) {
            auto session = std::make_unique<Session>(dsnWithConnectTimeout(m_postgres.dsn));
            {
                std::lock_guard lock(m_sessionMutex);
                m_session = std::move(session);
            }
            const Millis timeout = m_probe.statementTimeout.count() > 0
                                       ? m_probe.statementTimeout
                                       : m_postgres.statementTimeout;
            pqxx::nontransaction w(m_session->conn);
            // Read-only like every callscope session: the probe's SQL is the
            // deployment's, and it may only read.
            w.exec("SET default_transaction_read_only = on; SET statement_timeout = " +
                   std::to_string(timeout.count()) + "; SET application_name = 'callscope probe'");
            w.commit();
            m_session->conn.prepare("effect_probe", m_probe.sql);
        }
        pqxx::read_transaction t(m_session->conn);
        const pqxx::result r = t.exec_prepared("effect_probe", key);
        t.commit();
        return !r.empty();
    } catch (const std::exception& e) {
        {
            std::lock_guard lock(m_sessionMutex);
            m_session.reset();
        }
        error = "probe (" + redactDsn(m_postgres.dsn) +
                "): " + trimmed(scrubSecrets(e.what(), m_secrets));
        return std::nullopt;
    }
}

} // namespace callscope
