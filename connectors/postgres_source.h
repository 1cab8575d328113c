#pragma once
// The server's idempotency record and attempt log (SPEC §1.1, §1.2) through
// the config's mapping, in read-only sessions with a statement timeout.
#include "connectors/config.h"
#include "connectors/source.h"

#include <memory>
#include <vector>

namespace callscope {

// What `callscope check` reports of the database: how the mapping lands,
// how big the tables are and whether callscope's reads can use an index.
struct PostgresCheck {
    struct Column {
        std::string key;    // "record.call_id"
        std::string name;   // the user's column; "" when unmapped
        std::string type;   // its SQL type (a domain's: the type it is over)
        std::string domain; // the domain it is declared as, "" when none
        bool found = true;
    };
    struct Access {
        std::string what;     // "follow: rows changed since the last poll"
        bool indexed = false; // an index condition serves the read's predicate
        std::string plan;     // the plan's scan node, e.g. "Index Scan using x on t"
        std::string advice;   // what index would serve it, when none does
    };
    struct Relation {
        std::string key;  // "record" or "attempt"
        std::string name; // as configured
        bool found = true;
        std::string kind; // "table", "view", "materialized view", ...
        // Counted up to kCountedRows; beyond that (or when counting timed
        // out) `rows` is the planner's estimate.
        static constexpr std::int64_t kCountedRows = 100'000;
        std::int64_t rows = 0;
        bool estimated = false;
        bool writable = false; // the session's role may INSERT, UPDATE, DELETE or TRUNCATE it
        std::vector<Column> columns;
        std::vector<Access> access;
        // How a window's read gets its rows: "binary COPY", or "text COPY"
        // when a column's type is not one callscope reads in binary.
        std::string windowRead;
    };
    std::string server; // server_version
    std::string user;
    bool readOnly = false;  // the session is read-only (callscope sets it)
    bool superuser = false; // the role is a superuser (more than callscope needs)
    std::vector<Relation> relations;
    // The mapping does not fit: tables or columns not found, wrong types.
    std::vector<std::string> mappingProblems;
    std::vector<std::string> notes; // steps that failed (a count that timed out, ...)
    ObservationBatch sample;        // the newest rows, decoded (rejections included)
};

class PostgresSource : public Source {
public:
    explicit PostgresSource(const PostgresConfig& config);
    ~PostgresSource() override;

    std::string name() const override { return "postgres"; }
    void loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                    const std::atomic<bool>& cancel) override;
    void follow(ObservationSink& sink, const std::atomic<bool>& stop) override;

    // Point reads by primary key / index, for callIds referenced elsewhere
    // and for a cold drill-down (SPEC §4.3). Each runs on a connection of its
    // own (callable from any thread while following); `cancel` turning true
    // cancels the query on the server, which then throws SourceError.
    ObservationBatch fetchCalls(const std::vector<std::string>& callIds,
                                const std::atomic<bool>* cancel = nullptr);

    // Records (and their attempts) with this request digest created within
    // `window` of `around`: the siblings of a key rotation.
    ObservationBatch fetchByDigest(const std::string& digest, EpochMillis around, Millis window,
                                   const std::atomic<bool>* cancel = nullptr);

    // The result snapshot of one record ("" when none), for reports.
    std::string resultSnapshot(const std::string& callId,
                               const std::atomic<bool>* cancel = nullptr);

    // Connects and checks the mapping; throws SourceError.
    void connect();
    // Connects and describes the mapped tables, reading the newest
    // `sampleRows` rows of each (EXPLAIN only for the access paths).
    PostgresCheck check(std::size_t sampleRows);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
