#include "connectors/postgres_source.h"

#include "connectors/message_decoder.h"

#include <pqxx/pqxx>

#include <chrono>
#include <map>
#include <set>
#include <thread>

namespace callscope {
namespace {

constexpr std::size_t kBatchRows = 20'000;
constexpr std::int64_t kPollLimit = 200'000;

// COPY text format: tab-separated, \N for NULL, backslash escapes.
void splitCopyLine(std::string_view line, std::vector<std::string>& fields,
                   std::vector<bool>& nulls) {
    fields.clear();
    nulls.clear();
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    std::string cur;
    bool isNull = false;
    for (std::size_t i = 0; i <= line.size(); ++i) {
        if (i == line.size() || line[i] == '\t') {
            fields.push_back(std::move(cur));
            nulls.push_back(isNull);
            cur.clear();
            isNull = false;
            continue;
        }
        const char ch = line[i];
        if (ch != '\\' || i + 1 >= line.size()) {
            cur += ch;
            continue;
        }
        const char n = line[++i];
        switch (n) {
        case 'N': isNull = true; break;
        case 't': cur += '\t'; break;
        case 'n': cur += '\n'; break;
        case 'r': cur += '\r'; break;
        case 'b': cur += '\b'; break;
        case 'f': cur += '\f'; break;
        case 'v': cur += '\v'; break;
        default:
            if (n >= '0' && n <= '7') { // up to three octal digits
                int v = n - '0';
                for (int k = 0; k < 2 && i + 1 < line.size() && line[i + 1] >= '0' &&
                                line[i + 1] <= '7';
                     ++k)
                    v = v * 8 + (line[++i] - '0');
                cur += static_cast<char>(v);
            } else {
                cur += n;
            }
        }
    }
}

std::int64_t toInt(const std::string& s, std::int64_t fallback) {
    if (s.empty())
        return fallback;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    return *end ? fallback : v;
}

std::string quoteIdent(pqxx::connection& c, const std::string& name) { return c.quote_name(name); }

// "idem.records" -> "idem"."records"
std::string quoteTable(pqxx::connection& c, const std::string& table) {
    std::string out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = table.find('.', start);
        out += quoteIdent(c, table.substr(start, dot == std::string::npos ? dot : dot - start));
        if (dot == std::string::npos)
            return out;
        out += '.';
        start = dot + 1;
    }
}

std::string textArray(const std::vector<std::string>& values) {
    std::string a = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i)
            a += ',';
        a += '"';
        for (const char ch : values[i]) {
            if (ch == '"' || ch == '\\')
                a += '\\';
            a += ch;
        }
        a += '"';
    }
    return a + "}";
}

enum class TimeKind { TimestampTz, Timestamp, Epoch };

} // namespace

struct PostgresSource::Impl {
    explicit Impl(const PostgresConfig& c)
        : cfg(c), statusWords(c.record.statusValues, kRecordStatusNames),
          outcomeWords(c.attempt.outcomeValues, kAttemptOutcomeNames) {}

    PostgresConfig cfg;
    WordMap<RecordStatus> statusWords;
    WordMap<AttemptOutcome> outcomeWords;
    std::unique_ptr<pqxx::connection> conn;

    std::string recordSelect, attemptSelect; // "SELECT ... FROM table"
    std::string recordTable, attemptTable;
    std::map<std::string, TimeKind> timeKinds; // "record.updated_at" -> kind
    std::string recordUpdated, recordCreated, attemptArrived, recordCallId, attemptCallId, attemptId;

    EpochMillis recordCursor = kNoTime, attemptCursor = kNoTime;
    std::map<std::int64_t, EpochMillis> openAttempts; // id -> arrived, re-read until finished

    std::string dsnWithTimeout() const {
        const std::string& d = cfg.dsn;
        if (d.find("://") != std::string::npos || d.find("connect_timeout") != std::string::npos)
            return d;
        return d + " connect_timeout=5";
    }

    void connect() {
        try {
            conn = std::make_unique<pqxx::connection>(dsnWithTimeout());
            pqxx::nontransaction w(*conn);
            // callscope only reads: every transaction of this session is read-only.
            w.exec("SET default_transaction_read_only = on");
            w.exec("SET statement_timeout = " + std::to_string(cfg.statementTimeout.count()));
            w.exec("SET application_name = 'callscope'");
        } catch (const std::exception& e) {
            conn.reset();
            throw SourceError(std::string("PostgreSQL (") + redactDsn(cfg.dsn) + "): " + e.what());
        }
        prepareQueries();
    }

    // Column name -> SQL type, for a table; empty when the table is missing.
    std::map<std::string, std::string> columnsOf(const std::string& table) {
        pqxx::nontransaction w(*conn);
        std::map<std::string, std::string> cols;
        try {
            for (const auto& row : w.exec(
                     "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                     "WHERE a.attrelid = " + w.quote(table) + "::regclass AND a.attnum > 0 AND "
                     "NOT a.attisdropped"))
                cols[row[0].as<std::string>()] = row[1].as<std::string>();
        } catch (const pqxx::sql_error&) {
        }
        return cols;
    }

    std::string column(const std::map<std::string, std::string>& cols, const std::string& key,
                       const std::string& name, const std::string& table) {
        if (!cols.count(name))
            throw SourceError("postgres." + key + ": column \"" + name + "\" not found in table " +
                                  table,
                              true);
        return quoteIdent(*conn, name);
    }

    std::string timeColumn(const std::map<std::string, std::string>& cols, const std::string& key,
                           const std::string& name, const std::string& table) {
        const std::string q = column(cols, key, name, table);
        const std::string& type = cols.at(name);
        TimeKind kind;
        if (type.rfind("timestamp", 0) == 0 && type.find("with time zone") != std::string::npos &&
            type.find("without") == std::string::npos)
            kind = TimeKind::TimestampTz;
        else if (type.rfind("timestamp", 0) == 0)
            kind = TimeKind::Timestamp;
        else if (type == "bigint" || type == "integer" || type == "smallint" ||
                 type.rfind("numeric", 0) == 0)
            kind = TimeKind::Epoch;
        else
            throw SourceError("postgres." + key + ": column \"" + name + "\" has type " + type +
                                  "; expected timestamptz, timestamp or an integer of epoch "
                                  "seconds or milliseconds",
                              true);
        timeKinds[q] = kind;
        return q;
    }

    // Epoch milliseconds of a time column, whatever its type.
    std::string millis(const std::string& q) const {
        switch (timeKinds.at(q)) {
        case TimeKind::TimestampTz:
        case TimeKind::Timestamp: // nominal time, taken as UTC
            return "(extract(epoch from " + q + ") * 1000)::bigint";
        case TimeKind::Epoch: // seconds or milliseconds, told apart by magnitude
            return "(CASE WHEN " + q + " >= 100000000000 THEN " + q + " ELSE " + q +
                   " * 1000 END)::bigint";
        }
        return q;
    }

    // `column op t` written so that an index on the column can serve it.
    std::string bound(const std::string& q, const char* op, EpochMillis t) const {
        const std::string secs = std::to_string(t / 1000) + "." + std::to_string(1000 + t % 1000).substr(1);
        switch (timeKinds.at(q)) {
        case TimeKind::TimestampTz:
            return q + " " + op + " to_timestamp(" + secs + ")";
        case TimeKind::Timestamp:
            return q + " " + op + " (to_timestamp(" + secs + ") AT TIME ZONE 'UTC')";
        case TimeKind::Epoch:
            return millis(q) + " " + op + " " + std::to_string(t);
        }
        return "true";
    }

    void prepareQueries() {
        const RecordMapping& r = cfg.record;
        const auto rc = columnsOf(r.table);
        if (rc.empty())
            throw SourceError("postgres.record.table: table \"" + r.table +
                                  "\" not found (or not readable by this user)",
                              true);
        recordTable = quoteTable(*conn, r.table);
        recordCallId = column(rc, "record.call_id", r.callId, r.table);
        recordCreated = timeColumn(rc, "record.created_at", r.createdAt, r.table);
        recordUpdated = timeColumn(rc, "record.updated_at", r.updatedAt, r.table);
        const std::string expire = timeColumn(rc, "record.expire_at", r.expireAt, r.table);
        recordSelect =
            "SELECT " + recordCallId + "::text, " +
            column(rc, "record.request_digest", r.requestDigest, r.table) + "::text, " +
            column(rc, "record.status", r.status, r.table) + "::text, " +
            (r.firstSource.empty() ? std::string("''")
                                   : column(rc, "record.first_source", r.firstSource, r.table) +
                                         "::text") +
            ", " +
            (r.lockVersion.empty() ? std::string("0")
                                   : column(rc, "record.lock_version", r.lockVersion, r.table) +
                                         "::bigint") +
            ", " + millis(recordCreated) + ", " + millis(recordUpdated) + ", " + millis(expire) +
            " FROM " + recordTable;
        if (!r.resultSnapshot.empty())
            column(rc, "record.result_snapshot", r.resultSnapshot, r.table);

        if (!cfg.attempt.enabled)
            return;
        const AttemptMapping& a = cfg.attempt;
        const auto ac = columnsOf(a.table);
        if (ac.empty())
            throw SourceError("postgres.attempt.table: table \"" + a.table +
                                  "\" not found (set postgres.attempt.enabled = false to run "
                                  "without the attempt log)",
                              true);
        attemptTable = quoteTable(*conn, a.table);
        attemptId = column(ac, "attempt.id", a.id, a.table);
        attemptCallId = column(ac, "attempt.call_id", a.callId, a.table);
        attemptArrived = timeColumn(ac, "attempt.arrived_at", a.arrivedAt, a.table);
        attemptSelect =
            "SELECT " + attemptId + "::bigint, " + attemptCallId + "::text, " +
            column(ac, "attempt.request_digest", a.requestDigest, a.table) + "::text, " +
            column(ac, "attempt.source_instance", a.sourceInstance, a.table) + "::text, " +
            (a.traceId.empty() ? std::string("''")
                               : column(ac, "attempt.trace_id", a.traceId, a.table) + "::text") +
            ", " + column(ac, "attempt.outcome", a.outcome, a.table) + "::text, " +
            millis(attemptArrived) + ", " +
            (a.finishedAt.empty()
                 ? std::string("NULL::bigint")
                 : millis(timeColumn(ac, "attempt.finished_at", a.finishedAt, a.table))) +
            " FROM " + attemptTable;
    }

    // One row of recordSelect -> observation (or a rejection).
    void addRecord(const std::vector<std::string>& f, const std::vector<bool>& nulls,
                   ObservationBatch& b) {
        const auto st = statusWords.find(f[2]);
        if (f[0].empty() || !st || nulls[5] || nulls[6]) {
            b.rejected.push_back({f[0].empty() ? "missing call_id"
                                  : !st        ? "unknown status \"" + f[2] + "\""
                                               : "missing created_at/updated_at",
                                  cfg.record.table, f[0]});
            return;
        }
        RecordObservation o;
        o.callId = f[0];
        o.digest = f[1];
        o.status = *st;
        o.firstSource = f[3];
        o.lockVersion = static_cast<int>(toInt(f[4], 0));
        o.createdAt = toInt(f[5], kNoTime);
        o.updatedAt = toInt(f[6], kNoTime);
        o.expireAt = nulls[7] ? kNoTime : toInt(f[7], kNoTime);
        recordCursor = std::max(recordCursor, o.updatedAt);
        b.records.push_back(std::move(o));
    }

    void addAttempt(const std::vector<std::string>& f, const std::vector<bool>& nulls,
                    ObservationBatch& b) {
        const auto out = outcomeWords.find(f[5]);
        if (f[1].empty() || !out || nulls[6]) {
            b.rejected.push_back({f[1].empty() ? "missing call_id"
                                  : !out       ? "unknown outcome \"" + f[5] + "\""
                                               : "missing arrived_at",
                                  cfg.attempt.table, f[1]});
            return;
        }
        AttemptObservation o;
        o.id = toInt(f[0], 0);
        o.callId = f[1];
        o.digest = f[2];
        o.sourceInstance = f[3];
        o.traceId = f[4];
        o.outcome = *out;
        o.arrivedAt = toInt(f[6], kNoTime);
        o.finishedAt = nulls[7] ? kNoTime : toInt(f[7], kNoTime);
        attemptCursor = std::max(attemptCursor, o.arrivedAt);
        if (o.finishedAt == kNoTime)
            openAttempts[o.id] = o.arrivedAt;
        else
            openAttempts.erase(o.id);
        b.attempts.push_back(std::move(o));
    }

    // COPY (query) TO STDOUT, streamed: rows are not buffered whole.
    template <typename Add>
    void stream(const std::string& query, ObservationSink& sink, const std::atomic<bool>& cancel,
                Add add) {
        pqxx::work w(*conn);
        // libpqxx 6.4 writes "COPY <name> TO STDOUT" with the name as given,
        // so a parenthesised query streams like a table.
        pqxx::stream_from s(w, "(" + query + ")");
        std::string line;
        std::vector<std::string> fields;
        std::vector<bool> nulls;
        ObservationBatch batch;
        while (s.get_raw_line(line)) {
            splitCopyLine(line, fields, nulls);
            (this->*add)(fields, nulls, batch);
            if (batch.size() + batch.rejected.size() >= kBatchRows) {
                sink.deliver(std::move(batch));
                batch = {};
                if (cancel)
                    break;
            }
        }
        s.complete();
        w.commit();
        if (!batch.empty() || !batch.rejected.empty())
            sink.deliver(std::move(batch));
    }

    template <typename Add>
    void query(const std::string& sql, ObservationBatch& batch, Add add) {
        pqxx::work w(*conn);
        std::vector<std::string> fields;
        std::vector<bool> nulls;
        for (const auto& row : w.exec(sql)) {
            fields.clear();
            nulls.clear();
            for (const auto& field : row) {
                nulls.push_back(field.is_null());
                fields.push_back(field.is_null() ? std::string() : field.as<std::string>());
            }
            (this->*add)(fields, nulls, batch);
        }
        w.commit();
    }

    std::int64_t overlapMs() const { return 10'000 + 2 * cfg.pollInterval.count(); }

    // One incremental read: rows changed since the cursors, re-reading an
    // overlap so rows committed late are not missed; the store applies a row
    // seen twice once.
    void poll(ObservationSink& sink) {
        const EpochMillis now = nowMillis();
        pollOnce(sink, now);
        sink.recordCoverage(now); // rows committed before `now` have been read
    }

    void pollOnce(ObservationSink& sink, EpochMillis now) {
        if (recordCursor == kNoTime)
            recordCursor = now - overlapMs();
        if (attemptCursor == kNoTime)
            attemptCursor = now - overlapMs();
        for (;;) {
            ObservationBatch batch;
            const EpochMillis from = recordCursor - overlapMs();
            query(recordSelect + " WHERE " + bound(recordUpdated, ">=", from) + " ORDER BY " +
                      recordUpdated + ", " + recordCallId + " LIMIT " + std::to_string(kPollLimit),
                  batch, &Impl::addRecord);
            const bool more = static_cast<std::int64_t>(batch.records.size()) >= kPollLimit;
            if (!batch.empty() || !batch.rejected.empty())
                sink.deliver(std::move(batch));
            if (!more || recordCursor - overlapMs() <= from)
                break;
        }
        if (attemptSelect.empty())
            return;
        ObservationBatch batch;
        std::string open;
        for (auto it = openAttempts.begin(); it != openAttempts.end();) {
            // Executions that never finish (a crashed server) are not re-read forever.
            if (it->second < now - 3'600'000) {
                it = openAttempts.erase(it);
                continue;
            }
            open += (open.empty() ? "" : ",") + std::to_string(it->first);
            ++it;
        }
        query(attemptSelect + " WHERE " + bound(attemptArrived, ">=", attemptCursor - overlapMs()) +
                  (open.empty() ? std::string() : " OR " + attemptId + " IN (" + open + ")") +
                  " ORDER BY " + attemptArrived + ", " + attemptId,
              batch, &Impl::addAttempt);
        if (!batch.empty() || !batch.rejected.empty())
            sink.deliver(std::move(batch));
    }
};

PostgresSource::PostgresSource(const PostgresConfig& config)
    : m(std::make_unique<Impl>(config)) {}
PostgresSource::~PostgresSource() = default;

void PostgresSource::connect() { m->connect(); }

void PostgresSource::loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                                const std::atomic<bool>& cancel) {
    if (!m->conn)
        m->connect();
    try {
        // Records that changed in the window (created before its end), and
        // attempts that arrived in it.
        m->stream(m->recordSelect + " WHERE " + m->bound(m->recordUpdated, ">=", since) + " AND " +
                      m->bound(m->recordCreated, "<", until),
                  sink, cancel, &Impl::addRecord);
        if (!m->attemptSelect.empty() && !cancel)
            m->stream(m->attemptSelect + " WHERE " + m->bound(m->attemptArrived, ">=", since) +
                          " AND " + m->bound(m->attemptArrived, "<", until),
                      sink, cancel, &Impl::addAttempt);
        m->recordCursor = std::max(m->recordCursor, std::min(until, nowMillis()));
        m->attemptCursor = std::max(m->attemptCursor, std::min(until, nowMillis()));
    } catch (const SourceError&) {
        throw;
    } catch (const std::exception& e) {
        m->conn.reset();
        throw SourceError(std::string("PostgreSQL: ") + e.what());
    }
    sink.recordCoverage(std::min(until, nowMillis()));
    sink.health({"postgres", true, "", nowMillis(), 0});
}

ObservationBatch PostgresSource::fetchCalls(const std::vector<std::string>& callIds) {
    ObservationBatch batch;
    if (callIds.empty())
        return batch;
    if (!m->conn)
        m->connect();
    try {
        for (std::size_t i = 0; i < callIds.size(); i += 5000) {
            const std::vector<std::string> part(
                callIds.begin() + static_cast<std::ptrdiff_t>(i),
                callIds.begin() + static_cast<std::ptrdiff_t>(std::min(callIds.size(), i + 5000)));
            const std::string arr = m->conn->quote(textArray(part)) + "::text[]";
            m->query(m->recordSelect + " WHERE " + m->recordCallId + " = ANY(" + arr + ")", batch,
                     &Impl::addRecord);
            if (!m->attemptSelect.empty())
                m->query(m->attemptSelect + " WHERE " + m->attemptCallId + " = ANY(" + arr +
                             ") ORDER BY " + m->attemptArrived,
                         batch, &Impl::addAttempt);
        }
    } catch (const std::exception& e) {
        m->conn.reset();
        throw SourceError(std::string("PostgreSQL: ") + e.what());
    }
    return batch;
}

ObservationBatch PostgresSource::fetchByDigest(const std::string& digest, EpochMillis around,
                                               Millis window) {
    ObservationBatch batch;
    if (!m->conn)
        m->connect();
    std::vector<std::string> ids;
    try {
        pqxx::work w(*m->conn);
        for (const auto& row :
             w.exec("SELECT " + m->recordCallId + "::text FROM " + m->recordTable + " WHERE " +
                    quoteIdent(*m->conn, m->cfg.record.requestDigest) + " = " + w.quote(digest) +
                    " AND " + m->bound(m->recordCreated, ">=", around - window.count()) + " AND " +
                    m->bound(m->recordCreated, "<=", around + window.count()) + " LIMIT 100"))
            ids.push_back(row[0].as<std::string>());
        w.commit();
    } catch (const std::exception& e) {
        m->conn.reset();
        throw SourceError(std::string("PostgreSQL: ") + e.what());
    }
    return fetchCalls(ids);
}

std::string PostgresSource::resultSnapshot(const std::string& callId) {
    if (m->cfg.record.resultSnapshot.empty())
        return {};
    if (!m->conn)
        m->connect();
    pqxx::work w(*m->conn);
    const auto r = w.exec("SELECT " + quoteIdent(*m->conn, m->cfg.record.resultSnapshot) +
                          "::text FROM " + m->recordTable + " WHERE " + m->recordCallId + " = " +
                          w.quote(callId));
    return r.empty() || r[0][0].is_null() ? std::string() : r[0][0].as<std::string>();
}

void PostgresSource::follow(ObservationSink& sink, const std::atomic<bool>& stop) {
    std::int64_t backoffMs = 1000;
    bool wasUp = m->conn != nullptr;
    std::string reported; // the outage already reported
    const auto down = [&](const std::string& why) {
        m->conn.reset();
        if (wasUp || why != reported)
            sink.health({"postgres", false, why, kNoTime, 0});
        reported = why;
        wasUp = false;
    };
    while (!stop) {
        try {
            if (!m->conn)
                m->connect();
            m->poll(sink);
            if (!wasUp)
                sink.health({"postgres", true, "", nowMillis(), 0});
            wasUp = true;
            reported.clear();
            backoffMs = 1000;
            const auto until = std::chrono::steady_clock::now() + m->cfg.pollInterval;
            while (!stop && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        } catch (const SourceError& e) {
            if (e.configError)
                throw;
            down(e.what());
        } catch (const std::exception& e) {
            down(std::string("PostgreSQL: ") + e.what());
        }
        if (!wasUp) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoffMs);
            while (!stop && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            backoffMs = std::min<std::int64_t>(backoffMs * 2, 30'000);
        }
    }
}

} // namespace callscope
