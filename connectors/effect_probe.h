#pragma once
// The business-effect probe (SPEC §5 [probe]): the deployment's own read-only
// query ("SELECT 1 FROM orders WHERE order_no = $1") asked for a SUCCESS
// record's bizNo or callId on a connection of its own, read-only, with its own
// statement_timeout. A row means the business write happened.
#include "connectors/config.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace callscope {

class EffectProbe {
public:
    EffectProbe(const PostgresConfig& postgres, const ProbeConfig& probe);
    ~EffectProbe();
    // Whether the business row exists; nullopt with `error` (no secrets in
    // it) when the query failed. The connection is opened on first use and
    // again after a failure.
    std::optional<bool> exists(const std::string& key, std::string& error);
    // `callscope check`: the query prepared and planned for a sample key, on
    // a read-only session of its own. False with `error` when it cannot be.
    struct Plan {
        std::vector<std::string> lines; // EXPLAIN's text
        bool scansWholeTable = false;   // a Seq Scan: every probe reads the table
    };
    bool explain(Plan& plan, std::string& error);
    // Cancels the query running in exists() (from another thread: stop()).
    void cancel();

private:
    PostgresConfig m_postgres;
    ProbeConfig m_probe;
    std::vector<std::string> m_secrets;
    struct Session;            // the connection (libpqxx stays out of this header)
    std::mutex m_sessionMutex; // guards m_session's lifetime (not its use: one caller at a time)
    std::unique_ptr<Session> m_session;
};

} // namespace callscope
