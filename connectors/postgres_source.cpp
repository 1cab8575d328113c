#include "connectors/postgres_source.h"

#include "connectors/copy_text.h"
#include "connectors/message_decoder.h"
#include "connectors/secrets.h"
#include "models/backoff.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace callscope {
namespace {

constexpr std::size_t kBatchRows = 2'000; // (small enough to stay in cache: see KafkaSource)
// Rows per page of an incremental read; pages follow each other by keyset
// (time, id), so any number of rows sharing one timestamp is read through.
constexpr std::int64_t kPageRows = 50'000;
// Attempts re-read until they finish; beyond this many the oldest are let go.
constexpr std::size_t kMaxOpenAttempts = 10'000;
// Times converted in SQL are clamped to +-kTimeClamp; anything beyond year 9999
// (infinity, NaN, an epoch in the wrong unit) is out of range.
constexpr std::int64_t kLatestSane = 253'402'300'800'000; // 10000-01-01
bool saneTime(std::int64_t t) {
    return t > -kLatestSane && t < kLatestSane;
}

std::int64_t toInt(const std::string& s, std::int64_t fallback) {
    if (s.empty())
        return fallback;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    return *end ? fallback : v;
}

// A time column as the server writes it to our sessions (DateStyle ISO,
// TimeZone UTC): "2024-05-20 10:29:03.120456+00" (timestamptz), the same
// without the offset (timestamp: nominal, taken as UTC), "infinity",
// "-infinity", a year past 9999 or BC; or the integer milliseconds millis()
// makes of an epoch column. Microseconds round to the nearest millisecond,
// half away from zero (as the server's numeric did when it converted them:
// the server now only writes its text, a third of its work on a window).
// What is not a time is out of range.
std::int64_t timeField(const std::string& text, std::int64_t fallback) {
    const std::string_view s = text;
    if (s.empty())
        return fallback;
    std::int64_t v = 0;
    if (const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        ec == std::errc{} && p == s.data() + s.size())
        return v;
    if (s == "infinity")
        return kTimeClamp;
    if (s == "-infinity" || s.ends_with(" BC"))
        return -kTimeClamp;
    std::size_t pos = 0;
    const auto number = [&](std::size_t digits, int& out) {
        if (pos + digits > s.size())
            return false;
        out = 0;
        for (std::size_t i = 0; i < digits; ++i, ++pos) {
            if (s[pos] < '0' || s[pos] > '9')
                return false;
            out = out * 10 + (s[pos] - '0');
        }
        return true;
    };
    const auto expect = [&](char c) { return pos < s.size() && s[pos++] == c; };
    std::size_t yearDigits = 0;
    while (yearDigits < s.size() && s[yearDigits] >= '0' && s[yearDigits] <= '9')
        ++yearDigits;
    if (yearDigits > 4)
        return kTimeClamp; // past 9999
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (yearDigits != 4 || !number(4, y) || !expect('-') || !number(2, mo) || !expect('-') ||
        !number(2, d) || !expect(' ') || !number(2, h) || !expect(':') || !number(2, mi) ||
        !expect(':') || !number(2, sec))
        return kTimeClamp;
    using namespace std::chrono;
    const year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
    if (!ymd.ok() || h > 24 || mi > 59 || sec > 60)
        return kTimeClamp;
    std::int64_t micros = 0;
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        int scale = 100'000, digits = 0;
        for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits) {
            micros += (s[pos] - '0') * scale;
            scale /= 10;
        }
        if (digits == 0 || digits > 6)
            return kTimeClamp;
    }
    std::int64_t offset = 0; // seconds east of UTC
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
        const int sign = s[pos++] == '-' ? -1 : 1;
        int oh = 0, om = 0, os = 0;
        if (!number(2, oh) || (pos < s.size() && (!expect(':') || !number(2, om))) ||
            (pos < s.size() && (!expect(':') || !number(2, os))))
            return kTimeClamp;
        offset = sign * (oh * 3600 + om * 60 + os);
    }
    if (pos != s.size())
        return kTimeClamp;
    const std::int64_t seconds = std::int64_t{sys_days{ymd}.time_since_epoch().count()} * 86'400 +
                                 h * 3600 + mi * 60 + sec - offset;
    const std::int64_t total = seconds * 1'000'000 + micros;
    return roundToMillis(total);
}

std::string quoteIdent(pqxx::connection& c, const std::string& name) {
    return c.quote_name(name);
}

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
        : cfg(c), secrets(dsnSecrets(c.dsn)),
          statusWords(c.record.statusValues, kRecordStatusNames),
          outcomeWords(c.attempt.outcomeValues, kAttemptOutcomeNames) {}

    PostgresConfig cfg;
    std::vector<std::string> secrets; // scrubbed from every error text libpq gives
    std::string scrubbed(const char* what) const { return scrubSecrets(what, secrets); }
    // A failure on `c` as one line (libpq's lines, DETAIL and HINT among
    // them, joined by "; "), secrets scrubbed. A connection that broke says
    // so, whatever noticed it first: the server's or libpq's words are kept,
    // libpqxx's alone ("not connected", "lost while committing transaction...
    // check manually", which a read-only session never needs) are not.
    std::string failure(const std::exception& e, const pqxx::connection* c) const {
        const std::string why = oneLine(e.what());
        const bool lost =
            dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr || (c && !c->is_open());
        if (!lost)
            return "PostgreSQL: " + why;
        const bool told = why.find("FATAL:") != std::string::npos ||
                          why.find("server closed the connection") != std::string::npos ||
                          why.find("could not receive data") != std::string::npos;
        return told ? "PostgreSQL: connection lost: " + why : "PostgreSQL: connection lost";
    }
    // An error text of libpq's as one line, secrets scrubbed.
    std::string oneLine(const char* what) const {
        const std::string text = scrubbed(what);
        std::string why;
        for (std::size_t at = 0; at < text.size();) {
            std::size_t nl = text.find('\n', at);
            if (nl == std::string::npos)
                nl = text.size();
            std::string_view line(text.data() + at, nl - at);
            while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
                line.remove_suffix(1);
            while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
                line.remove_prefix(1);
            if (!line.empty())
                why.append(why.empty() ? "" : "; ").append(line);
            at = nl + 1;
        }
        return why;
    }
    WordMap<RecordStatus> statusWords;
    WordMap<AttemptOutcome> outcomeWords;
    // The observations of the batches this source delivered, filled again
    // once the model has applied them (no allocation per row).
    std::shared_ptr<ObservationPool> pool = makeObservationPool();
    // One connection per thread: `conn` belongs to the thread that loads and
    // follows; point lookups (a cold drill-down, a report's snapshots) come
    // from other threads and use `lookupConn` under `lookupMutex`.
    std::unique_ptr<pqxx::connection> conn;
    std::mutex lookupMutex;
    std::unique_ptr<pqxx::connection> lookupConn;

    // Written once, by whichever connection comes first (under prepareMutex),
    // then only read.
    std::mutex prepareMutex;
    bool prepared = false;
    std::string recordSelect, attemptSelect; // "SELECT ... FROM table"
    std::string recordStream, attemptStream; // the same without the cursor column
    std::string recordTable, attemptTable;
    std::map<std::string, TimeKind> timeKinds;   // quoted column -> kind
    std::map<std::string, std::string> sqlTypes; // quoted column -> its SQL type
    // The fields of a row of recordSelect / attemptSelect read from
    // character(n) columns: selected bare, their padding trimmed here (see
    // textOf).
    std::vector<std::size_t> recordPadded, attemptPadded;
    // The columns of recordStream / attemptStream as binary COPY gives them;
    // empty when a column's type is not one splitBinaryCopyRow reads (an
    // array, say), or a row did not fit: that read is made in text (see
    // binaryKinds, stream).
    std::vector<CopyBinary> recordBinary, attemptBinary;
    std::string recordUpdated, recordCreated, attemptArrived, recordCallId, attemptCallId,
        attemptId;
    std::string recordCallIdType, attemptCallIdType; // their SQL types (see idArrayCast)
    bool attemptsFinish = false;                     // attempt.finished_at is mapped

    // The follow thread's own state.
    EpochMillis recordCursor = kNoTime, attemptCursor = kNoTime;
    // The loaded window's start: following never reads rows before it (the
    // look back over clock_skew would bring in calls whose other events, read
    // from the window's start only, are missing, and judge them half-seen).
    EpochMillis windowStart = kNoTime;
    // The start of the window's slice being streamed (kNoTime otherwise):
    // every row read has its slice time (updated_at, arrival) at or after it.
    EpochMillis sliceFrom = kNoTime;
    std::map<std::int64_t, EpochMillis> openAttempts; // id -> arrived, re-read until finished
    std::int64_t polls = 0;

    // A read-only session; the mapping is checked (and the queries made) by
    // the first connection that asks for it.
    std::unique_ptr<pqxx::connection> open(bool prepare = true) {
        std::unique_ptr<pqxx::connection> c;
        try {
            c = std::make_unique<pqxx::connection>(dsnWithConnectTimeout(cfg.dsn));
            pqxx::nontransaction w(*c);
            // callscope only reads: every transaction of this session is read-only.
            // (One round trip: a drill-down opens a connection of its own.)
            // Times are read as the server writes them: ISO, in UTC (timeField()).
            w.exec("SET default_transaction_read_only = on; SET statement_timeout = " +
                   std::to_string(cfg.statementTimeout.count()) +
                   "; SET application_name = 'callscope'; SET DateStyle = 'ISO, YMD'; "
                   "SET TimeZone = 'UTC'");
        } catch (const std::exception& e) {
            throw SourceError("PostgreSQL (" + redactDsn(cfg.dsn) + "): " + scrubbed(e.what()));
        }
        if (prepare)
            prepareOnce(*c);
        return c;
    }

    void prepareOnce(pqxx::connection& c) {
        std::lock_guard lock(prepareMutex);
        if (!prepared) {
            prepareQueries(c);
            prepared = true;
        }
    }

    void connect() { conn = open(); }

    // Runs a point lookup on the lookup connection; any failure drops that
    // connection (never the follow thread's) and becomes a SourceError. When
    // `cancel` turns true the server is asked to cancel the running query
    // (a lookup by digest over an unindexed table can take minutes).
    template <typename F> auto lookup(F f, const std::atomic<bool>* cancel = nullptr) {
        std::lock_guard lock(lookupMutex);
        std::mutex watchMutex;
        std::condition_variable finished;
        bool done = false;
        std::thread watcher;
        const auto stopWatching = [&] {
            if (!watcher.joinable())
                return;
            {
                std::lock_guard w(watchMutex);
                done = true;
            }
            finished.notify_all();
            watcher.join();
        };
        try {
            if (!lookupConn)
                lookupConn = open();
            if (cancel)
                watcher = std::thread([&, conn = lookupConn.get()] {
                    std::unique_lock w(watchMutex);
                    while (!done) {
                        if (*cancel) {
                            conn->cancel_query(); // PQcancel: safe from another thread
                            return;
                        }
                        finished.wait_for(w, std::chrono::milliseconds(20));
                    }
                });
            auto result = f(*lookupConn);
            stopWatching();
            return result;
        } catch (const SourceError&) {
            stopWatching();
            lookupConn.reset();
            throw;
        } catch (const std::exception& e) {
            stopWatching();
            const std::string why = failure(e, lookupConn.get());
            lookupConn.reset();
            if (cancel && *cancel)
                throw SourceError("PostgreSQL: lookup cancelled");
            throw SourceError(why);
        }
    }

    // Column name -> SQL type, for a table; empty when the table is missing.
    // A column of a domain has the type the domain is over (through domains
    // over domains), with its length: a domain over character(n) is read and
    // looked up as one (its index used), a domain over timestamptz or bigint
    // is a time column like its base. `domains`, when given, gets the
    // domain each such column is declared as (for check to show).
    std::map<std::string, std::string>
    columnsOf(pqxx::connection& c, const std::string& table,
              std::map<std::string, std::string>* domains = nullptr) {
        pqxx::nontransaction w(c);
        std::map<std::string, std::string> cols;
        const std::string of =
            w.quote(quoteTable(c, table)) + "::regclass AND a.attnum > 0 AND NOT a.attisdropped";
        // (True when asked: false when the server refused the query.)
        const auto ask = [&](const std::string& select) {
            try {
                for (const auto& row : w.exec(select + of)) {
                    cols[row[0].as<std::string>()] = row[1].as<std::string>();
                    if (domains && row.size() > 2 && !row[2].is_null())
                        (*domains)[row[0].as<std::string>()] = row[2].as<std::string>();
                }
                return true;
            } catch (const pqxx::sql_error&) {
                return false;
            }
        };
        if (!ask("SELECT a.attname, format_type(coalesce(d.base, a.atttypid), "
                 "coalesce(d.typmod, a.atttypmod)), CASE WHEN d.base IS NOT NULL THEN "
                 "format_type(a.atttypid, a.atttypmod) END FROM pg_attribute a LEFT JOIN LATERAL ("
                 "WITH RECURSIVE chain(base, typmod, depth) AS ("
                 "SELECT t.typbasetype, t.typtypmod, 1 FROM pg_type t "
                 "WHERE t.oid = a.atttypid AND t.typtype = 'd' UNION ALL "
                 "SELECT t.typbasetype, CASE WHEN chain.typmod >= 0 THEN chain.typmod "
                 "ELSE t.typtypmod END, chain.depth + 1 FROM chain JOIN pg_type t "
                 "ON t.oid = chain.base AND t.typtype = 'd' WHERE chain.depth < 32) "
                 "SELECT base, typmod FROM chain ORDER BY depth DESC LIMIT 1) d ON true "
                 "WHERE a.attrelid = "))
            // A server that cannot resolve domains so, or a table that is not
            // there: asked plainly, it answers the types as named, or nothing.
            ask("SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                "WHERE a.attrelid = ");
        return cols;
    }

    pqxx::connection* preparing = nullptr; // the connection prepareQueries runs on

    std::string column(const std::map<std::string, std::string>& cols, const std::string& key,
                       const std::string& name, const std::string& table) {
        if (!cols.count(name)) {
            std::string have;
            for (const auto& [col, type] : cols)
                have += (have.empty() ? "" : ", ") + col;
            throw SourceError("postgres." + key + ": column \"" + name + "\" not found in table " +
                                  table + " (its columns: " + have + ")",
                              true);
        }
        const std::string q = quoteIdent(*preparing, name);
        sqlTypes[q] = cols.at(name);
        return q;
    }

    std::string timeColumn(const std::map<std::string, std::string>& cols, const std::string& key,
                           const std::string& name, const std::string& table) {
        const std::string q = column(cols, key, name, table);
        const std::string& type = cols.at(name);
        const bool array = type.ends_with("[]");
        TimeKind kind;
        if (!array && type.rfind("timestamp", 0) == 0 &&
            type.find("with time zone") != std::string::npos &&
            type.find("without") == std::string::npos)
            kind = TimeKind::TimestampTz;
        else if (!array && type.rfind("timestamp", 0) == 0)
            kind = TimeKind::Timestamp;
        else if (type == "bigint" || type == "integer" || type == "smallint" ||
                 (!array && type.rfind("numeric", 0) == 0))
            kind = TimeKind::Epoch;
        else
            throw SourceError("postgres." + key + ": column \"" + name + "\" has type " + type +
                                  "; expected timestamptz, timestamp or an integer of epoch "
                                  "seconds or milliseconds" +
                                  (array ? ", not an array" : ""),
                              true);
        timeKinds[q] = kind;
        return q;
    }

    // A time column in a form timeField() reads, in SQL that cannot fail:
    // timestamps as they are (their text), epoch numbers as milliseconds
    // (NaN and integers of any width clamped to +-9e15, which the row
    // readers treat as out of range).
    std::string millis(const std::string& q) const {
        const std::string hi = std::to_string(kTimeClamp), lo = "-" + hi;
        switch (timeKinds.at(q)) {
        case TimeKind::TimestampTz:
        case TimeKind::Timestamp: // nominal time, taken as UTC
            return q;             // its text, read by timeField()
        case TimeKind::Epoch: {   // seconds or milliseconds, told apart by magnitude
            const std::string n = q + "::numeric";
            return "(CASE WHEN " + q + " IS NULL THEN NULL WHEN " + n + " = 'NaN' THEN " + lo +
                   " WHEN " + n + " >= 1e16 THEN " + hi + " WHEN " + n + " <= -1e16 THEN " + lo +
                   " WHEN abs(" + n + ") >= 1e11 THEN trunc(" + n + ")::bigint ELSE trunc(" + n +
                   " * 1000)::bigint END)";
        }
        }
        return q;
    }

    // `q op t` for an integer column of epoch seconds or milliseconds, told
    // apart by magnitude as millis() does (1e11 ms is 1973, 1e11 s the year
    // 5138): two ranges on the bare column, which its index can serve.
    std::string epochBound(const std::string& q, const std::string& op, EpochMillis t) const {
        const std::string type = sqlTypes.at(q);
        const bool integer = type == "bigint" || type == "integer" || type == "smallint";
        const bool lower = op[0] == '>';
        // t / 1000 exactly for a numeric column; for an integer one the
        // integer bound that selects the same rows.
        const std::int64_t floorSecs = t >= 0 ? t / 1000 : -((-t + 999) / 1000);
        const std::int64_t ceilSecs = floorSecs + (t % 1000 != 0 ? 1 : 0);
        std::string secs;
        if (!integer)
            secs = std::to_string(floorSecs) + "." +
                   std::to_string(1000 + (t % 1000 + 1000) % 1000).substr(1);
        else if (op == ">=" || op == "<")
            secs = std::to_string(ceilSecs);
        else
            secs = std::to_string(floorSecs);
        const std::string ms = std::to_string(t), split = "100000000000";
        if (lower)
            return "(" + q + " " + op + " " + ms + " OR (" + q + " " + op + " " + secs + " AND " +
                   q + " < " + split + "))";
        return "((" + q + " " + op + " " + ms + " AND " + q + " >= " + split + ") OR " + q + " " +
               op + " " + secs + ")";
    }

    // A literal of the column's own type, for keyset comparisons.
    std::string literal(pqxx::connection& c, const std::string& q, const std::string& text) const {
        return c.quote(text) + "::" + sqlTypes.at(q);
    }

    // `column op t` written so that an index on the column can serve it.
    std::string bound(const std::string& q, const char* op, EpochMillis t) const {
        const std::string secs =
            std::to_string(t / 1000) + "." + std::to_string(1000 + t % 1000).substr(1);
        switch (timeKinds.at(q)) {
        case TimeKind::TimestampTz:
            return q + " " + op + " to_timestamp(" + secs + ")";
        case TimeKind::Timestamp:
            return q + " " + op + " (to_timestamp(" + secs + ") AT TIME ZONE 'UTC')";
        case TimeKind::Epoch:
            return epochBound(q, op, t);
        }
        return "true";
    }

    // A text column as the selects read it: cast to text, which costs the
    // server nothing for varchar and text and is how COPY writes the rest,
    // except character(n): that cast trims its trailing spaces, which cost
    // the server a quarter of a second per million rows (a fifth of its
    // work on a 1M-row window). Such a column is read bare and its field
    // (`field`) trimmed as PostgreSQL would (trimPadded).
    std::string textOf(const std::string& q, std::vector<std::size_t>& padded, std::size_t field) {
        if (blankPadded(sqlTypes.at(q))) {
            padded.push_back(field);
            return q;
        }
        return q + "::text";
    }
    // character(n) as format_type names it (bpchar: no length), or a domain
    // over it (columnsOf names the base); not an array of it.
    static bool blankPadded(const std::string& type) {
        return (type.rfind("character(", 0) == 0 || type == "character" || type == "bpchar") &&
               !type.ends_with("[]");
    }
    static void trimPadded(std::vector<std::string>& f, const std::vector<std::size_t>& padded) {
        for (const std::size_t i : padded) {
            std::string& v = f[i];
            const std::size_t end = v.find_last_not_of(' ');
            v.resize(end == std::string::npos ? 0 : end + 1);
        }
    }

    // How millis(q) comes in binary COPY.
    CopyBinary binaryTime(const std::string& q) const {
        return timeKinds.at(q) == TimeKind::Epoch ? CopyBinary::Int : CopyBinary::Timestamp;
    }
    // Timestamps go as 8-byte integers in binary COPY (always since
    // PostgreSQL 10): asked once per connection's preparing.
    static bool integerTimes(pqxx::connection& c) {
        try {
            pqxx::work w(c);
            return w.exec("SHOW integer_datetimes")[0][0].as<std::string>() == "on";
        } catch (const pqxx::broken_connection&) {
            throw;
        } catch (const std::exception&) {
            return false;
        }
    }
    // `kinds` when the server describes the columns of `select` as types
    // they read (and times are integers), else none. A window read in binary
    // COPY spares the server writing every time and number as text (a fifth
    // of its work on 1M records: \copy took 0.85 s instead of 1.09 s) and
    // this side parsing it.
    static std::vector<CopyBinary> binaryKinds(pqxx::connection& c, bool integerTimes,
                                               const std::string& select,
                                               std::vector<CopyBinary> kinds) {
        if (!integerTimes)
            return {};
        try {
            pqxx::work w(c);
            const pqxx::result r = w.exec(select + " LIMIT 0");
            w.commit();
            if (r.columns() != kinds.size())
                return {};
            for (pqxx::row::size_type i = 0; i < r.columns(); ++i) {
                const pqxx::oid t = r.column_type(i);
                // text, varchar, bpchar; int8, int4, int2; timestamp, timestamptz
                const bool fits = kinds[i] == CopyBinary::Text  ? t == 25 || t == 1043 || t == 1042
                                  : kinds[i] == CopyBinary::Int ? t == 20 || t == 23 || t == 21
                                                                : t == 1114 || t == 1184;
                if (!fits)
                    return {};
            }
            return kinds;
        } catch (const pqxx::broken_connection&) {
            throw;
        } catch (const std::exception&) {
            return {}; // (read in text, as before)
        }
    }

    // The selects name their outputs (cs_*) so that ORDER BY and WHERE on a
    // column name mean the table's column: an output named like it (a cast
    // to text) would take precedence in ORDER BY, sorting text and keeping
    // the index from giving the order.
    void prepareQueries(pqxx::connection& c) {
        preparing = &c;
        const RecordMapping& r = cfg.record;
        const auto rc = columnsOf(c, r.table);
        if (rc.empty())
            throw SourceError("postgres.record.table: table \"" + r.table +
                                  "\" not found (or not readable by this user)",
                              true);
        recordTable = quoteTable(c, r.table);
        recordCallId = column(rc, "record.call_id", r.callId, r.table);
        recordCallIdType = rc.at(r.callId);
        recordCreated = timeColumn(rc, "record.created_at", r.createdAt, r.table);
        recordUpdated = timeColumn(rc, "record.updated_at", r.updatedAt, r.table);
        const std::string expire = timeColumn(rc, "record.expire_at", r.expireAt, r.table);
        recordPadded.clear();
        recordSelect =
            "SELECT " + textOf(recordCallId, recordPadded, 0) + " AS cs_call_id, " +
            textOf(column(rc, "record.request_digest", r.requestDigest, r.table), recordPadded, 1) +
            ", " + textOf(column(rc, "record.status", r.status, r.table), recordPadded, 2) + ", " +
            (r.firstSource.empty()
                 ? std::string("''")
                 : textOf(column(rc, "record.first_source", r.firstSource, r.table), recordPadded,
                          3)) +
            ", " +
            (r.lockVersion.empty()
                 ? std::string("0")
                 : column(rc, "record.lock_version", r.lockVersion, r.table) + "::bigint") +
            ", " + millis(recordCreated) + ", " + millis(recordUpdated) + ", " + millis(expire);
        // A window's read needs no cursor: the server spares formatting a
        // time per row (a tenth of its work on a 1M-row read).
        recordStream = recordSelect + " FROM " + recordTable;
        recordSelect += ", " + recordUpdated + "::text AS cs_cursor FROM " + recordTable;
        const bool binaryTimes = integerTimes(c);
        recordBinary = binaryKinds(c, binaryTimes, recordStream,
                                   {CopyBinary::Text, CopyBinary::Text, CopyBinary::Text,
                                    CopyBinary::Text, CopyBinary::Int, binaryTime(recordCreated),
                                    binaryTime(recordUpdated), binaryTime(expire)});
        if (!r.resultSnapshot.empty())
            column(rc, "record.result_snapshot", r.resultSnapshot, r.table);

        if (!cfg.attempt.enabled)
            return;
        const AttemptMapping& a = cfg.attempt;
        const auto ac = columnsOf(c, a.table);
        if (ac.empty())
            throw SourceError("postgres.attempt.table: table \"" + a.table +
                                  "\" not found (set postgres.attempt.enabled = false to run "
                                  "without the attempt log)",
                              true);
        attemptTable = quoteTable(c, a.table);
        attemptId = column(ac, "attempt.id", a.id, a.table);
        attemptCallId = column(ac, "attempt.call_id", a.callId, a.table);
        attemptCallIdType = ac.at(a.callId);
        attemptArrived = timeColumn(ac, "attempt.arrived_at", a.arrivedAt, a.table);
        attemptPadded.clear();
        attemptSelect =
            "SELECT " + attemptId + "::bigint AS cs_id, " +
            textOf(attemptCallId, attemptPadded, 1) + " AS cs_call_id, " +
            textOf(column(ac, "attempt.request_digest", a.requestDigest, a.table), attemptPadded,
                   2) +
            ", " +
            textOf(column(ac, "attempt.source_instance", a.sourceInstance, a.table), attemptPadded,
                   3) +
            ", " +
            (a.traceId.empty()
                 ? std::string("''")
                 : textOf(column(ac, "attempt.trace_id", a.traceId, a.table), attemptPadded, 4)) +
            ", " + textOf(column(ac, "attempt.outcome", a.outcome, a.table), attemptPadded, 5) +
            ", " + millis(attemptArrived) + ", ";
        const std::string finished =
            a.finishedAt.empty() ? std::string()
                                 : timeColumn(ac, "attempt.finished_at", a.finishedAt, a.table);
        attemptSelect += finished.empty() ? std::string("NULL::bigint") : millis(finished);
        attemptStream = attemptSelect + " FROM " + attemptTable;
        attemptBinary =
            binaryKinds(c, binaryTimes, attemptStream,
                        {CopyBinary::Int, CopyBinary::Text, CopyBinary::Text, CopyBinary::Text,
                         CopyBinary::Text, CopyBinary::Text, binaryTime(attemptArrived),
                         finished.empty() ? CopyBinary::Int : binaryTime(finished)});
        attemptSelect += ", " + attemptArrived + "::text AS cs_cursor FROM " + attemptTable;
        attemptsFinish = !a.finishedAt.empty();
    }

    // One row of recordSelect -> observation (or a rejection).
    void addRecord(std::vector<std::string>& f, const std::vector<bool>& nulls,
                   ObservationBatch& b) const {
        trimPadded(f, recordPadded);
        const auto st = statusWords.find(f[2]);
        const std::int64_t created = timeField(f[5], 0), updated = timeField(f[6], 0),
                           expires = timeField(f[7], 0);
        const bool inRange = saneTime(created) && saneTime(updated);
        if (f[0].empty() || !st || nulls[5] || nulls[6] || !inRange) {
            // The reason is a fixed word (counted per reason, a metric label);
            // the value that did not fit goes with the sample.
            b.rejected.push_back(
                {f[0].empty() ? "missing call_id"
                 : !st        ? "unknown status"
                 : !inRange   ? "created_at/updated_at out of range"
                              : "missing created_at/updated_at",
                 cfg.record.table,
                 !f[0].empty() && !st ? f[0] + " (status \"" + f[2] + "\")" : f[0]});
            return;
        }
        RecordObservation& o = b.addRecord(); // (a spent one's buffers, when pooled)
        o.callId = f[0];
        o.digest = f[1];
        o.status = *st;
        o.firstSource = f[3];
        o.lockVersion = static_cast<int>(toInt(f[4], 0));
        o.createdAt = created;
        o.updatedAt = updated;
        // 'infinity' (never expires) and anything out of range: no expiry known.
        o.expireAt = nulls[7] || !saneTime(expires) ? kNoTime : expires;
    }

    void addAttempt(std::vector<std::string>& f, const std::vector<bool>& nulls,
                    ObservationBatch& b) const {
        trimPadded(f, attemptPadded);
        const auto out = outcomeWords.find(f[5]);
        const std::int64_t arrived = timeField(f[6], 0), finished = timeField(f[7], 0);
        const bool inRange = saneTime(arrived) && (nulls[7] || saneTime(finished));
        if (f[1].empty() || !out || nulls[6] || !inRange) {
            b.rejected.push_back(
                {f[1].empty() ? "missing call_id"
                 : !out       ? "unknown outcome"
                 : !inRange   ? "arrived_at/finished_at out of range"
                              : "missing arrived_at",
                 cfg.attempt.table,
                 !f[1].empty() && !out ? f[1] + " (outcome \"" + f[5] + "\")" : f[1]});
            return;
        }
        AttemptObservation& o = b.addAttempt(); // (a spent one's buffers, when pooled)
        o.id = toInt(f[0], 0);
        o.callId = f[1];
        o.digest = f[2];
        o.sourceInstance = f[3];
        o.traceId = f[4];
        o.outcome = *out;
        o.arrivedAt = arrived;
        o.finishedAt = nulls[7] ? kNoTime : finished;
    }

    // Keeps the attempts that have not finished, to re-read them until they do
    // (only when attempt.finished_at is mapped: otherwise attempts never change).
    void track(const ObservationBatch& b) {
        if (!attemptsFinish)
            return;
        for (const auto& a : b.attempts) {
            if (a.finishedAt == kNoTime)
                openAttempts[a.id] = a.arrivedAt;
            else
                openAttempts.erase(a.id);
        }
        while (openAttempts.size() > kMaxOpenAttempts) // ids grow with time: the oldest go
            openAttempts.erase(openAttempts.begin());
    }

    // COPY (query) TO STDOUT, streamed: rows are not buffered whole. A window
    // can be large, so the session's statement_timeout does not apply here
    // (it would cancel the same read on every retry); `cancel` stops it.
    // `binary`: the columns' kinds, to read it in binary COPY (else text).
    template <typename Add>
    // Returns the rows read.
    std::size_t stream(const std::string& query, std::vector<CopyBinary>& binary,
                       ObservationSink& sink, const std::atomic<bool>& cancel, Add add) {
        pqxx::work w(*conn);
        w.exec("SET LOCAL statement_timeout = 0");
        // libpqxx 6.4 writes "COPY <name> TO STDOUT" with the name as given,
        // so a parenthesised query streams like a table; its own "TO STDOUT"
        // after our options is made a comment.
        pqxx::stream_from s(w, "(" + query + ")" +
                                   (binary.empty() ? "" : " TO STDOUT (FORMAT binary) --"));
        std::string line;
        std::vector<std::string> fields;
        std::vector<bool> nulls;
        ObservationBatch batch(pool);
        std::size_t rows = 0;
        bool first = true, mismatch = false;
        while (s.get_raw_line(line)) {
            if (binary.empty()) {
                splitCopyLine(line, fields, nulls);
            } else {
                const int got = splitBinaryCopyRow(line, first, binary, fields, nulls);
                first = false;
                if (got == 0)
                    continue;
                if (got < 0) { // (the table changed since): read in text from the retry on
                    binary.clear();
                    mismatch = true;
                    break;
                }
            }
            ++rows;
            (this->*add)(fields, nulls, batch);
            if (batch.size() + batch.rejected.size() >= kBatchRows) {
                track(batch);
                batch.readFrom = readFromOf(batch);
                sink.deliver(std::move(batch));
                batch.clear(); // (a sink may have kept a copy)
                if (cancel)
                    break;
            }
        }
        s.complete();
        w.commit();
        if (mismatch)
            throw SourceError("PostgreSQL: a row of a window's read (binary COPY) does not match "
                              "its columns (the table changed?); it is read again in text");
        track(batch);
        batch.readFrom = readFromOf(batch);
        if (batch.hasAnything())
            sink.deliver(std::move(batch));
        return rows;
    }

    // The earliest slice time of a window slice's batch: the least of its
    // rows' (a millisecond early: times are read rounded to the nearest),
    // never before the slice's start; kNoTime outside a window's slice.
    EpochMillis readFromOf(const ObservationBatch& batch) const {
        if (sliceFrom == kNoTime)
            return kNoTime;
        EpochMillis least = INT64_MAX;
        for (const RecordObservation& r : batch.records)
            if (r.updatedAt != kNoTime)
                least = std::min(least, r.updatedAt);
        for (const AttemptObservation& a : batch.attempts)
            if (a.arrivedAt != kNoTime)
                least = std::min(least, a.arrivedAt);
        return least == INT64_MAX ? sliceFrom : std::max(sliceFrom, least - 1);
    }

    // The earliest time in `column` of `table` at or after `from` (kNoTime
    // when there is none); nullopt when that cannot be told: epoch numbers
    // (seconds and milliseconds side by side do not sort by time) or a
    // query the server refuses.
    std::optional<EpochMillis> firstAtOrAfter(const std::string& table, const std::string& column,
                                              EpochMillis from) {
        if (timeKinds.at(column) == TimeKind::Epoch)
            return std::nullopt;
        try {
            pqxx::work w(*conn);
            const pqxx::result r = w.exec(firstAtOrAfterSql(table, column, from));
            if (r.empty() || r[0][0].is_null())
                return kNoTime;
            return timeField(r[0][0].c_str(), kNoTime);
        } catch (const pqxx::sql_error&) {
            return std::nullopt;
        }
    }

    // Its query. The output is named: unnamed, the cast to text would be
    // called like the column, and ORDER BY would sort that text (a full
    // scan and a sort of the table, a quarter of a second at 1M rows, for
    // each quiet stretch) instead of reading the column's index in order.
    std::string firstAtOrAfterSql(const std::string& table, const std::string& column,
                                  EpochMillis from) const {
        return "SELECT (" + millis(column) + ")::text AS cs_first FROM " + table + " WHERE " +
               bound(column, ">=", from) + " ORDER BY " + column + " LIMIT 1";
    }

    // Runs a query into `batch`; returns the number of rows and leaves the
    // last row's fields in `last` (when given).
    template <typename Add>
    std::int64_t query(pqxx::connection& c, const std::string& sql, ObservationBatch& batch,
                       Add add, std::vector<std::string>* last = nullptr) const {
        pqxx::work w(c);
        std::vector<std::string> fields;
        std::vector<bool> nulls;
        std::int64_t rows = 0;
        for (const auto& row : w.exec(sql)) {
            fields.clear();
            nulls.clear();
            for (const auto& field : row) {
                nulls.push_back(field.is_null());
                fields.push_back(field.is_null() ? std::string() : field.as<std::string>());
            }
            (this->*add)(fields, nulls, batch);
            ++rows;
        }
        w.commit();
        if (last)
            *last = fields;
        return rows;
    }

    std::int64_t overlapMs() const { return 10'000 + 2 * cfg.pollInterval.count(); }

    // The database server's clock, in epoch milliseconds: the feed's cursor
    // never passes it, whatever clocks stamped the rows.
    EpochMillis databaseNow() {
        pqxx::nontransaction w(*conn);
        return w.exec("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint")[0][0]
            .as<std::int64_t>();
    }

    // More than 200k rows in the record table by the planner's estimate (a
    // view, or a table never analysed, counts as small: read in one go).
    bool largeRecordTable() {
        try {
            pqxx::work w(*conn);
            const pqxx::row r = w.exec1("SELECT coalesce((SELECT reltuples::bigint FROM pg_class "
                                        "WHERE oid = to_regclass(" +
                                        w.quote(recordTable) + ") AND relkind = 'r'), 0)");
            return r[0].as<std::int64_t>() > 200'000;
        } catch (const std::exception&) {
            return false;
        }
    }

    // The reads callscope makes, written once: `check` explains these same
    // queries. A page of the feed: rows from a bound on, in (time, id) order.
    static std::string pageSql(const std::string& select, const std::string& timeCol,
                               const std::string& idCol, const std::string& where) {
        return select + " WHERE " + where + " ORDER BY " + timeCol + ", " + idCol + " LIMIT " +
               std::to_string(kPageRows);
    }
    // The records, and the attempts in arrival order, of the callIds in `ids`
    // (a quoted array literal of texts).
    std::string recordsOfSql(const std::string& ids) const {
        return recordSelect + " WHERE " + recordCallId + " = ANY(" + ids +
               idArrayCast(recordCallIdType) + ")";
    }
    std::string attemptsOfSql(const std::string& ids) const {
        return attemptSelect + " WHERE " + attemptCallId + " = ANY(" + ids +
               idArrayCast(attemptCallIdType) + ") ORDER BY " + attemptArrived;
    }
    // What an array of callIds is cast to for `= ANY`, given the column's
    // type. A character(n) column compared with text[] is cast to text,
    // which its index cannot serve: a lookup read the whole table. bpchar[]
    // (no length: nothing is padded or cut) compares as the column does,
    // ignoring trailing blanks, as the trimmed text callscope reads.
    static std::string idArrayCast(const std::string& type) {
        return blankPadded(type) ? "::bpchar[]" : "::text[]";
    }

    // Reads every row with time >= from, in pages ordered by (time, id) that
    // follow each other by keyset; delivers each page. Returns the latest
    // time seen (kNoTime when none).
    template <typename Add, typename TimeOf>
    EpochMillis pageThrough(const std::string& select, const std::string& timeCol,
                            const std::string& idCol, std::size_t idField, EpochMillis from,
                            ObservationSink& sink, Add add, TimeOf timeOf) {
        std::string where = bound(timeCol, ">=", from);
        EpochMillis latest = kNoTime;
        for (;;) {
            ObservationBatch batch(pool);
            std::vector<std::string> last;
            const std::int64_t rows =
                query(*conn, pageSql(select, timeCol, idCol, where), batch, add, &last);
            latest = std::max(latest, timeOf(batch));
            track(batch);
            if (batch.hasAnything())
                sink.deliver(std::move(batch));
            if (rows < kPageRows)
                return latest;
            const std::string& lastTime = last.back(); // the time column as text
            const std::string& lastId = last[idField];
            where = lastId.empty() ? timeCol + " > " + literal(*conn, timeCol, lastTime)
                                   : "(" + timeCol + ", " + idCol + ") > (" +
                                         literal(*conn, timeCol, lastTime) + ", " +
                                         literal(*conn, idCol, lastId) + ")";
        }
    }

    // One incremental read: rows changed since the cursors. Each read looks
    // back an overlap (rows committed a little after their timestamp); every
    // 30 s it looks back clock_skew (a writer whose clock runs behind, a long
    // transaction). The store applies a row seen twice once.
    void poll(ObservationSink& sink) {
        const EpochMillis now = nowMillis();
        pollOnce(sink, now);
        sink.recordCoverage(now); // rows committed before `now` have been read
    }

    std::chrono::steady_clock::time_point lastDeepRead{};

    void pollOnce(ObservationSink& sink, EpochMillis now) {
        const EpochMillis dbNow = databaseNow();
        if (recordCursor == kNoTime)
            recordCursor = now - overlapMs();
        if (attemptCursor == kNoTime)
            attemptCursor = now - overlapMs();
        std::int64_t back = overlapMs();
        const auto steadyNow = std::chrono::steady_clock::now();
        if (steadyNow - lastDeepRead >= std::chrono::seconds(30)) {
            lastDeepRead = steadyNow;
            back = std::max<std::int64_t>(back, cfg.clockSkew.count());
        }
        const auto notBeforeWindow = [&](EpochMillis t) {
            return windowStart == kNoTime ? t : std::max(t, windowStart);
        };
        const EpochMillis seenRecord = pageThrough(recordSelect, recordUpdated, recordCallId, 0,
                                                   notBeforeWindow(recordCursor - back), sink,
                                                   &Impl::addRecord, [](const ObservationBatch& b) {
                                                       EpochMillis t = kNoTime;
                                                       for (const auto& r : b.records)
                                                           t = std::max(t, r.updatedAt);
                                                       return t;
                                                   });
        // A row stamped ahead of the database's clock does not move the cursor
        // past it, so rows committed later with true times are still read.
        recordCursor = std::max(recordCursor, std::min(seenRecord, dbNow));
        if (attemptSelect.empty())
            return;
        const EpochMillis attemptFrom = notBeforeWindow(attemptCursor - back);
        const EpochMillis seenAttempt =
            pageThrough(attemptSelect, attemptArrived, attemptId, 0, attemptFrom, sink,
                        &Impl::addAttempt, [](const ObservationBatch& b) {
                            EpochMillis t = kNoTime;
                            for (const auto& a : b.attempts)
                                t = std::max(t, a.arrivedAt);
                            return t;
                        });
        attemptCursor = std::max(attemptCursor, std::min(seenAttempt, dbNow));
        // Executions still running are re-read until they finish (those that
        // arrived before the time bound above); those that never finish (a
        // crashed server) are let go after an hour.
        std::vector<std::string> open;
        for (auto it = openAttempts.begin(); it != openAttempts.end();) {
            if (it->second < now - 3'600'000) {
                it = openAttempts.erase(it);
                continue;
            }
            if (it->second < attemptFrom)
                open.push_back(std::to_string(it->first));
            ++it;
        }
        if (open.empty())
            return;
        ObservationBatch batch;
        query(*conn,
              attemptSelect + " WHERE " + attemptId + " = ANY(" + conn->quote(textArray(open)) +
                  "::bigint[])",
              batch, &Impl::addAttempt);
        track(batch);
        if (batch.hasAnything())
            sink.deliver(std::move(batch));
    }
};

namespace {

// The scan node of a plan line ("->  Index Scan using x on t  (cost=…" ->
// "Index Scan using x on t").
std::string scanNode(const std::string& line) {
    std::string l = line;
    const std::size_t arrow = l.find("->");
    if (arrow != std::string::npos)
        l = l.substr(arrow + 2);
    const std::size_t cost = l.find("  (cost=");
    if (cost != std::string::npos)
        l = l.substr(0, cost);
    const std::size_t start = l.find_first_not_of(' ');
    return start == std::string::npos ? std::string() : l.substr(start);
}

} // namespace

PostgresCheck PostgresSource::check(std::size_t sampleRows) {
    PostgresCheck out;
    const PostgresConfig& cfg = m->cfg;
    // A connection of its own, the mapping not yet checked: check lists every
    // column that is not there, not the first only.
    std::unique_ptr<pqxx::connection> own = m->open(false);
    pqxx::connection& c = *own;
    // One step that fails (a statement timeout on a huge table, a view that
    // errors) is a note; the others still run. A lost connection ends it.
    const auto step = [&](const std::string& what, auto&& f) {
        try {
            f();
        } catch (const pqxx::broken_connection& e) {
            throw SourceError(m->failure(e, &c));
        } catch (const pqxx::sql_error& e) {
            out.notes.push_back(what + ": " + m->oneLine(e.what())); // (DETAIL and HINT kept)
        }
    };
    const std::vector<std::pair<const char*, std::string>> recordColumns{
        {"call_id", cfg.record.callId},
        {"request_digest", cfg.record.requestDigest},
        {"status", cfg.record.status},
        {"result_snapshot", cfg.record.resultSnapshot},
        {"first_source", cfg.record.firstSource},
        {"lock_version", cfg.record.lockVersion},
        {"created_at", cfg.record.createdAt},
        {"updated_at", cfg.record.updatedAt},
        {"expire_at", cfg.record.expireAt}};
    const AttemptMapping& am = cfg.attempt;
    const std::vector<std::pair<const char*, std::string>> attemptColumns{
        {"id", am.id},
        {"call_id", am.callId},
        {"request_digest", am.requestDigest},
        {"source_instance", am.sourceInstance},
        {"trace_id", am.traceId},
        {"outcome", am.outcome},
        {"arrived_at", am.arrivedAt},
        {"finished_at", am.finishedAt}};
    try {
        {
            pqxx::nontransaction w(c);
            const auto r = w.exec("SELECT current_setting('server_version'), current_user::text, "
                                  "current_setting('default_transaction_read_only'), "
                                  "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)");
            out.server = r[0][0].as<std::string>();
            out.user = r[0][1].as<std::string>();
            out.readOnly = r[0][2].as<std::string>() == "on";
            out.superuser = !r[0][3].is_null() && r[0][3].as<bool>();
        }
        const auto describe = [&](const std::string& key, const std::string& table,
                                  const std::vector<std::pair<const char*, std::string>>& mapped) {
            PostgresCheck::Relation rel;
            rel.key = key;
            rel.name = table;
            std::map<std::string, std::string> domains;
            const auto cols = m->columnsOf(c, table, &domains);
            rel.found = !cols.empty();
            if (!rel.found) {
                out.mappingProblems.push_back("postgres." + key + ".table: table \"" + table +
                                              "\" not found (or not readable by this user)");
                out.relations.push_back(std::move(rel));
                return;
            }
            std::string have;
            for (const auto& [col, type] : cols)
                have += (have.empty() ? "" : ", ") + col;
            for (const auto& [what, name] : mapped) {
                const bool there = name.empty() || cols.count(name);
                const std::string type = there && !name.empty() ? cols.at(name) : "";
                const auto domain = domains.find(name);
                rel.columns.push_back({key + "." + what, name, type,
                                       domain == domains.end() ? "" : domain->second, there});
                if (!there)
                    out.mappingProblems.push_back("postgres." + key + "." + what + ": column \"" +
                                                  name + "\" not found in " + table +
                                                  " (its columns: " + have + ")");
            }
            std::int64_t analysed = -1;
            {
                pqxx::nontransaction w(c);
                const std::string regclass = w.quote(quoteTable(c, table)) + "::regclass";
                const auto k = w.exec("SELECT c.relkind::text, c.reltuples::bigint, "
                                      "has_table_privilege(" +
                                      regclass +
                                      ", 'INSERT, UPDATE, "
                                      "DELETE, TRUNCATE') FROM pg_class c WHERE c.oid = " +
                                      regclass);
                static const std::map<std::string, std::string> kinds{{"r", "table"},
                                                                      {"v", "view"},
                                                                      {"m", "materialized view"},
                                                                      {"p", "partitioned table"},
                                                                      {"f", "foreign table"}};
                const std::string kind = k.empty() ? "" : k[0][0].as<std::string>();
                rel.kind = kinds.count(kind) ? kinds.at(kind) : "relation";
                rel.writable = !k.empty() && k[0][2].as<bool>();
                analysed = k.empty() ? -1 : k[0][1].as<std::int64_t>();
            }
            const std::string from = quoteTable(c, table);
            // Counted exactly up to a bound (cheap), estimated beyond it or
            // when counting times out: the planner's figure for a table never
            // analysed is a guess.
            const std::int64_t bound = PostgresCheck::Relation::kCountedRows;
            rel.estimated = true;
            step(key + " row count", [&] {
                pqxx::work t(c);
                rel.rows = t.exec("SELECT count(*) FROM (SELECT 1 FROM " + from + " LIMIT " +
                                  std::to_string(bound + 1) + ") x")[0][0]
                               .as<std::int64_t>();
                t.commit();
                rel.estimated = rel.rows > bound;
            });
            if (rel.estimated) {
                rel.rows = std::max(rel.rows, analysed);
                step(key + " row estimate", [&] {
                    pqxx::work t(c);
                    const auto e = t.exec("EXPLAIN SELECT 1 FROM " + from);
                    const std::string first = e.empty() ? "" : e[0][0].as<std::string>();
                    const std::size_t at = first.find(" rows=");
                    if (at != std::string::npos) {
                        const std::size_t end = first.find(' ', at + 6);
                        rel.rows =
                            std::max(rel.rows, toInt(first.substr(at + 6, end - at - 6), -1));
                    }
                });
            }
            out.relations.push_back(std::move(rel));
        };
        describe("record", cfg.record.table, recordColumns);
        if (am.enabled)
            describe("attempt", am.table, attemptColumns);
        if (!out.mappingProblems.empty())
            return out;
        // The names fit: the types are checked and the queries made.
        try {
            m->prepareOnce(c);
        } catch (const SourceError& e) {
            out.mappingProblems.push_back(e.what());
            return out;
        }

        // The plan of one read as callscope runs it, with sequential scans
        // priced out so that any index that can serve it shows (a small table
        // would be scanned whatever its indexes). It is indexed when an index
        // condition serves the predicate (and, for a read of the first rows
        // in an order, when no Sort node is in the plan: the index gives the order).
        // EXPLAIN runs nothing.
        const auto access = [&](PostgresCheck::Relation& rel, const char* what,
                                const std::string& sql, std::string advice, bool ordered = false) {
            PostgresCheck::Access a;
            a.what = what;
            step(rel.key + " plan of \"" + what + "\"", [&] {
                pqxx::work w(c);
                w.exec("SET LOCAL enable_seqscan = off");
                bool sorted = false;
                for (const auto& row : w.exec("EXPLAIN " + sql)) {
                    const std::string line = row[0].as<std::string>();
                    if (line.find("Index Cond:") != std::string::npos ||
                        line.find("Recheck Cond:") != std::string::npos)
                        a.indexed = true;
                    // A Sort node (not a Merge Append's sort key: partitions
                    // or a UNION ALL view merged in index order).
                    if (line.find("  (cost=") != std::string::npos) {
                        const std::string node = scanNode(line);
                        sorted |= node == "Sort" || node == "Incremental Sort";
                    }
                    if (line.find("Scan") == std::string::npos ||
                        line.find("Subquery") != std::string::npos)
                        continue;
                    const std::string node = scanNode(line);
                    if (a.plan.empty() || node.find("Index") != std::string::npos)
                        a.plan = node;
                }
                w.commit();
                if (ordered && sorted)
                    a.indexed = false;
            });
            if (!a.indexed)
                a.advice = std::move(advice);
            rel.access.push_back(std::move(a));
        };
        const auto onTable = [](const PostgresCheck::Relation& rel, const std::string& cols) {
            return rel.kind == "view" ? "an index on the table behind the view " + rel.name +
                                            ", on what the view gives as (" + cols + ")"
                                      : "an index on " + rel.name + " (" + cols + ")";
        };
        const RecordMapping& r = cfg.record;
        const std::string probe = c.quote(textArray({"x"})); // only the plan is asked
        PostgresCheck::Relation& record = out.relations.front();
        record.windowRead = m->recordBinary.empty() ? "text COPY" : "binary COPY";
        if (am.enabled)
            out.relations.back().windowRead =
                m->attemptBinary.empty() ? "text COPY" : "binary COPY";
        access(record, "follow: records changed since the last poll (every poll_interval)",
               Impl::pageSql(m->recordSelect, m->recordUpdated, m->recordCallId,
                             m->bound(m->recordUpdated, ">=", nowMillis() - 60'000)),
               onTable(record, r.updatedAt + ", " + r.callId));
        if (m->timeKinds.at(m->recordUpdated) != TimeKind::Epoch)
            access(record, "window: the next change after a quiet stretch (loading history)",
                   m->firstAtOrAfterSql(m->recordTable, m->recordUpdated, nowMillis() - 60'000),
                   onTable(record, r.updatedAt), true);
        access(record, "lookup: a record by callId (drill-down, messages naming a callId)",
               m->recordsOfSql(probe), onTable(record, r.callId));
        access(record, "siblings: records with one request digest (key rotation drill-down)",
               "SELECT " + m->recordCallId + " FROM " + m->recordTable + " WHERE " +
                   quoteIdent(c, r.requestDigest) + " = " + c.quote("x"),
               onTable(record, r.requestDigest));
        // The newest rows, decoded as callscope would (rejections included);
        // only where the follow read is indexed: else it would sort the table.
        const auto sample = [&](const PostgresCheck::Relation& rel, const std::string& sql,
                                auto add) {
            if (sampleRows == 0 || (!rel.access.front().indexed && rel.estimated)) {
                out.notes.push_back(rel.key + " sample skipped: " +
                                    (sampleRows == 0 ? std::string("--sample 0")
                                                     : "no index gives the newest rows"));
                return;
            }
            step(rel.key + " sample", [&] { m->query(c, sql, out.sample, add); });
        };
        sample(record,
               m->recordSelect + " ORDER BY " + m->recordUpdated + " DESC LIMIT " +
                   std::to_string(sampleRows),
               &Impl::addRecord);
        if (am.enabled) {
            PostgresCheck::Relation& attempt = out.relations.back();
            access(attempt, "follow: attempts arrived since the last poll",
                   Impl::pageSql(m->attemptSelect, m->attemptArrived, m->attemptId,
                                 m->bound(m->attemptArrived, ">=", nowMillis() - 60'000)),
                   onTable(attempt, am.arrivedAt + ", " + am.id));
            if (m->timeKinds.at(m->attemptArrived) != TimeKind::Epoch)
                access(
                    attempt, "window: the next arrival after a quiet stretch",
                    m->firstAtOrAfterSql(m->attemptTable, m->attemptArrived, nowMillis() - 60'000),
                    onTable(attempt, am.arrivedAt), true);
            access(attempt, "lookup: the attempts of a callId", m->attemptsOfSql(probe),
                   onTable(attempt, am.callId));
            sample(attempt,
                   m->attemptSelect + " ORDER BY " + m->attemptArrived + " DESC LIMIT " +
                       std::to_string(sampleRows),
                   &Impl::addAttempt);
        }
    } catch (const SourceError&) {
        throw;
    } catch (const std::exception& e) {
        // (Outside a step, or a commit that lost the connection: in_doubt_error.)
        throw SourceError(m->failure(e, &c));
    }
    return out;
}

namespace {

constexpr std::int64_t kMinSlice = 60'000;        // a minute
constexpr std::int64_t kFirstSlice = 15 * 60'000; // at most, before rows tell more
constexpr std::size_t kSliceRows = 25'000;        // records and attempts a slice aims at

// The next slice's length: scaled toward kSliceRows by what the last one held
// (at most 4x longer or shorter at once), between a minute and an eighth of
// the window.
std::int64_t nextSlice(std::int64_t slice, std::size_t rows, std::int64_t window) {
    const double scale = std::clamp(static_cast<double>(kSliceRows) /
                                        static_cast<double>(std::max<std::size_t>(rows, 1)),
                                    0.25, 4.0);
    const auto next = static_cast<std::int64_t>(static_cast<double>(slice) * scale);
    return std::clamp<std::int64_t>(next, kMinSlice, std::max(kMinSlice, window / 8));
}

} // namespace

PostgresSource::PostgresSource(const PostgresConfig& config) : m(std::make_unique<Impl>(config)) {}
PostgresSource::~PostgresSource() = default;

void PostgresSource::connect() {
    m->connect();
}

void PostgresSource::loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                                const std::atomic<bool>& cancel) {
    if (!m->conn)
        m->connect();
    m->windowStart = m->windowStart == kNoTime ? since : std::min(m->windowStart, since);
    try {
        // Records that changed in the window (created before its end), and
        // attempts that arrived in it, read in slices of time when the record
        // table is large: after each slice everything stamped before its end
        // is read, so the sink can let final calls go and keep the other
        // source in step. A slice is sized by the rows the last one held (about
        // kSliceRows), not by the window's length: a 30-day window over a
        // day of data must not read hours at a time, nor a quiet night minutes.
        const bool attempts = !m->attemptSelect.empty();
        const EpochMillis end = std::min(until, nowMillis());
        std::int64_t slice =
            m->largeRecordTable()
                ? std::clamp<std::int64_t>((end - since) / 64, kMinSlice, kFirstSlice)
                : INT64_MAX;
        sink.loadProgress("postgres", 0);
        for (EpochMillis from = since; !cancel;) {
            // The last slice has no upper bound on updated_at: a row changed
            // after the end still belongs to a record created before it.
            const bool last = end - from <= slice;
            const EpochMillis to = last ? end : from + slice;
            if (!last)
                sink.sliceLength("postgres", Millis{slice});
            std::string recordWhere = m->bound(m->recordUpdated, ">=", from) + " AND " +
                                      m->bound(m->recordCreated, "<", until);
            if (!last)
                recordWhere += " AND " + m->bound(m->recordUpdated, "<", to);
            m->sliceFrom = from; // (reset below, and when the read fails)
            std::size_t rows = m->stream(m->recordStream + " WHERE " + recordWhere, m->recordBinary,
                                         sink, cancel, &Impl::addRecord);
            if (attempts && !cancel)
                rows += m->stream(m->attemptStream + " WHERE " +
                                      m->bound(m->attemptArrived, ">=", from) + " AND " +
                                      m->bound(m->attemptArrived, "<", last ? until : to),
                                  m->attemptBinary, sink, cancel, &Impl::addAttempt);
            m->sliceFrom = kNoTime;
            if (last)
                break;
            from = to;
            if (rows == 0 && !cancel) {
                // Nothing there: on to the next row of either table (an index
                // lookup each), so that a quiet stretch costs no slices and
                // the first busy one is not read in one long slice.
                std::optional<EpochMillis> next =
                    m->firstAtOrAfter(m->recordTable, m->recordUpdated, to);
                if (attempts && next) {
                    const auto a = m->firstAtOrAfter(m->attemptTable, m->attemptArrived, to);
                    if (!a)
                        next.reset();
                    else if (*a != kNoTime && (*next == kNoTime || *a < *next))
                        next = a;
                }
                // (A millisecond early: the time read is rounded to the
                // nearest, and a row must not fall before the next slice.)
                if (next)
                    from = *next == kNoTime ? end : std::clamp(*next - 1, to, end);
                else
                    slice = nextSlice(slice, rows, end - since); // longer, then
            } else {
                slice = nextSlice(slice, rows, end - since);
            }
            sink.recordCoverage(from);
            sink.loadProgress("postgres", static_cast<int>(100 * (from - since) / (end - since)));
            sink.loadedUpTo("postgres", from, cancel);
        }
        m->recordCursor = std::max(m->recordCursor, std::min(until, nowMillis()));
        m->attemptCursor = std::max(m->attemptCursor, std::min(until, nowMillis()));
    } catch (const SourceError&) {
        m->sliceFrom = kNoTime;
        throw;
    } catch (const std::exception& e) {
        m->sliceFrom = kNoTime;
        const std::string why = m->failure(e, m->conn.get());
        m->conn.reset();
        throw SourceError(why);
    }
    sink.loadProgress("postgres", 100);
    sink.recordCoverage(std::min(until, nowMillis()));
    sink.health({"postgres", true, "", nowMillis(), 0, {}});
}

ObservationBatch PostgresSource::fetchCalls(const std::vector<std::string>& callIds,
                                            const std::atomic<bool>* cancel) {
    ObservationBatch batch;
    if (callIds.empty())
        return batch;
    m->lookup(
        [&](pqxx::connection& c) {
            for (std::size_t i = 0; i < callIds.size(); i += 5000) {
                const std::vector<std::string> part(
                    callIds.begin() + static_cast<std::ptrdiff_t>(i),
                    callIds.begin() +
                        static_cast<std::ptrdiff_t>(std::min(callIds.size(), i + 5000)));
                const std::string arr = c.quote(textArray(part));
                m->query(c, m->recordsOfSql(arr), batch, &Impl::addRecord);
                if (!m->attemptSelect.empty())
                    m->query(c, m->attemptsOfSql(arr), batch, &Impl::addAttempt);
            }
            return 0;
        },
        cancel);
    return batch;
}

ObservationBatch PostgresSource::fetchByDigest(const std::string& digest, EpochMillis around,
                                               Millis window, const std::atomic<bool>* cancel) {
    const std::vector<std::string> ids = m->lookup(
        [&](pqxx::connection& c) {
            std::vector<std::string> found;
            pqxx::work w(c);
            for (const auto& row : w.exec(
                     "SELECT " + m->recordCallId + "::text FROM " + m->recordTable + " WHERE " +
                     quoteIdent(c, m->cfg.record.requestDigest) + " = " + w.quote(digest) +
                     " AND " + m->bound(m->recordCreated, ">=", around - window.count()) + " AND " +
                     m->bound(m->recordCreated, "<=", around + window.count()) + " LIMIT 100"))
                found.push_back(row[0].as<std::string>());
            w.commit();
            return found;
        },
        cancel);
    return fetchCalls(ids, cancel);
}

std::string PostgresSource::resultSnapshot(const std::string& callId,
                                           const std::atomic<bool>* cancel) {
    if (m->cfg.record.resultSnapshot.empty())
        return {};
    return m->lookup(
        [&](pqxx::connection& c) {
            pqxx::work w(c);
            const auto r =
                w.exec("SELECT " + quoteIdent(c, m->cfg.record.resultSnapshot) + "::text FROM " +
                       m->recordTable + " WHERE " + m->recordCallId + " = " + w.quote(callId));
            return r.empty() || r[0][0].is_null() ? std::string() : r[0][0].as<std::string>();
        },
        cancel);
}

void PostgresSource::follow(ObservationSink& sink, const std::atomic<bool>& stop) {
    Backoff retry;
    bool wasUp = m->conn != nullptr;
    std::string reported; // the outage already reported
    const auto down = [&](const std::string& why) {
        m->conn.reset();
        if (wasUp || why != reported)
            sink.health({"postgres", false, why, kNoTime, 0, {}});
        reported = why;
        wasUp = false;
    };
    while (!stop) {
        try {
            if (!m->conn)
                m->connect();
            m->poll(sink);
            if (!wasUp)
                sink.health({"postgres", true, "", nowMillis(), 0, {}});
            wasUp = true;
            reported.clear();
            retry.reset();
            const auto until = std::chrono::steady_clock::now() + m->cfg.pollInterval;
            while (!stop && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        } catch (const SourceError& e) {
            if (e.configError)
                throw;
            down(e.what());
        } catch (const std::exception& e) {
            down(m->failure(e, m->conn.get()));
        }
        if (!wasUp) {
            const auto until =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(retry.next());
            while (!stop && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
}

} // namespace callscope
