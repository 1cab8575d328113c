#include "connectors/config.h"

#include "connectors/secrets.h"
#include "models/domain.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace callscope {
namespace {

template <std::size_t N> ValueWords canonicalWords(const std::array<std::string_view, N>& names) {
    ValueWords words;
    for (const auto n : names)
        words[std::string(n)] = {std::string(n)};
    return words;
}

int lineOf(const toml::node& n) {
    return static_cast<int>(n.source().begin.line);
}

// Reads one TOML table against the keys it may hold. Every key read is
// remembered, so finish() can refuse the ones callscope does not know.
class TableReader {
public:
    TableReader(const toml::table& table, std::string path, std::vector<ConfigError>& errors,
                const std::string& file)
        : m_table(table), m_path(std::move(path)), m_errors(errors), m_file(file) {}

    void string(std::string_view key, std::string& out) {
        if (const toml::node* n = take(key)) {
            if (auto v = n->value_exact<std::string>())
                out = *v;
            else
                error(*n, key, "expected a string");
        }
    }

    void nonEmptyString(std::string_view key, std::string& out) {
        if (const toml::node* n = take(key)) {
            auto v = n->value_exact<std::string>();
            if (!v)
                error(*n, key, "expected a string");
            else if (v->empty())
                error(*n, key, "must not be empty");
            else
                out = *v;
        }
    }

    // A libpq connection string: refused here, naming the key, when libpq
    // cannot parse it (what it quotes is hidden: it may be a password).
    void dsn(std::string_view key, std::string& out) {
        const toml::node* n = m_table.get(key);
        nonEmptyString(key, out);
        if (n && !out.empty())
            if (const auto problem = dsnProblem(out))
                error(*n, key, "libpq cannot parse it: " + *problem);
    }

    void duration(std::string_view key, Millis& out) {
        if (const toml::node* n = take(key)) {
            auto v = n->value_exact<std::string>();
            auto d = v ? parseDuration(*v) : std::nullopt;
            if (d)
                out = *d;
            else
                error(*n, key,
                      "expected a duration such as \"500ms\", \"30s\", \"5m\", \"2h\" or \"7d\"" +
                          (v ? ", got \"" + *v + "\"" : std::string()));
        }
    }

    // `least`: the smallest value that makes sense, with how to say it.
    void positiveInteger(std::string_view key, std::int64_t& out, std::int64_t least = 1,
                         const char* leastText = nullptr) {
        if (const toml::node* n = take(key)) {
            auto v = n->value_exact<std::int64_t>();
            if (!v)
                error(*n, key, "expected an integer");
            else if (*v <= 0)
                error(*n, key, "must be greater than zero");
            else if (*v < least)
                error(*n, key, std::string("must be at least ") + leastText);
            else
                out = *v;
        }
    }

    // A share from 0 to 1 (an integer 0 or 1 too).
    void fraction(std::string_view key, double& out) {
        if (const toml::node* n = take(key)) {
            std::optional<double> v = n->value_exact<double>();
            if (!v)
                if (auto i = n->value_exact<std::int64_t>())
                    v = double(*i);
            if (!v || !(*v >= 0.0 && *v <= 1.0))
                error(*n, key, "expected a number from 0 to 1");
            else
                out = *v;
        }
    }

    // One of `allowed`.
    void choice(std::string_view key, std::string& out,
                std::initializer_list<const char*> allowed) {
        if (const toml::node* n = take(key)) {
            auto v = n->value_exact<std::string>();
            std::string list;
            bool ok = false;
            for (const char* a : allowed) {
                list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
                ok |= v && *v == a;
            }
            if (ok)
                out = *v;
            else
                error(*n, key, "expected one of " + list);
        }
    }

    void boolean(std::string_view key, bool& out) {
        if (const toml::node* n = take(key)) {
            if (auto v = n->value_exact<bool>())
                out = *v;
            else
                error(*n, key, "expected true or false");
        }
    }

    // [a.b.status_values]: canonical word = [the user's words]
    template <std::size_t N>
    void words(std::string_view key, ValueWords& out,
               const std::array<std::string_view, N>& canon) {
        const toml::node* n = take(key);
        if (!n)
            return;
        const toml::table* t = n->as_table();
        if (!t) {
            error(*n, key, "expected a table of canonical word = [\"user word\", ...]");
            return;
        }
        std::map<std::string, std::string> seen; // user word -> canonical
        // toml++ iterates keys sorted; judge them in the order the user wrote them.
        std::vector<std::pair<const toml::key*, const toml::node*>> entries;
        for (auto&& [k, v] : *t)
            entries.emplace_back(&k, &v);
        std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
            return a.first->source().begin.line < b.first->source().begin.line;
        });
        for (const auto& [kp, vp] : entries) {
            const toml::key& k = *kp;
            const toml::node& v = *vp;
            const std::string name(k.str());
            const std::string full = std::string(key) + "." + name;
            bool known = false;
            for (auto c : canon)
                known |= (c == name);
            if (!known) {
                std::string allowed;
                for (auto c : canon)
                    allowed += (allowed.empty() ? "" : ", ") + std::string(c);
                error(v, full, "unknown canonical word (expected one of " + allowed + ")");
                continue;
            }
            const toml::array* arr = v.as_array();
            std::vector<std::string> list;
            bool good = arr && !arr->empty();
            if (arr) {
                for (auto&& el : *arr) {
                    auto s = el.value_exact<std::string>();
                    if (!s || s->empty()) {
                        good = false;
                        break;
                    }
                    list.push_back(*s);
                }
            }
            if (!good) {
                error(v, full, "expected a non-empty array of non-empty strings");
                continue;
            }
            for (const auto& w : list) {
                auto [it, inserted] = seen.emplace(w, name);
                if (!inserted && it->second != name)
                    error(v, full, "\"" + w + "\" is already a word for " + it->second);
            }
            out[name] = std::move(list);
        }
    }

    // A sub-table; nullopt (and an error) when the key holds something else.
    std::optional<TableReader> table(std::string_view key) {
        const toml::node* n = take(key);
        if (!n)
            return std::nullopt;
        if (const toml::table* t = n->as_table())
            return TableReader(*t, qualified(key), m_errors, m_file);
        error(*n, key, "expected a table");
        return std::nullopt;
    }

    // [kafka.properties]: passed to librdkafka as strings
    void properties(std::string_view key, std::map<std::string, std::string>& out) {
        const toml::node* n = take(key);
        if (!n)
            return;
        const toml::table* t = n->as_table();
        if (!t) {
            error(*n, key, "expected a table of \"librdkafka.property\" = value");
            return;
        }
        for (auto&& [k, v] : *t) {
            const std::string name(k.str());
            if (auto s = v.value_exact<std::string>())
                out[name] = *s;
            else if (auto i = v.value_exact<std::int64_t>())
                out[name] = std::to_string(*i);
            else if (auto b = v.value_exact<bool>())
                out[name] = *b ? "true" : "false";
            else
                error(v, std::string(key) + "." + name, "expected a string, integer or boolean");
        }
    }

    void finish() {
        for (auto&& [k, v] : m_table) {
            if (!m_known.count(std::string(k.str())))
                m_errors.push_back({m_file, static_cast<int>(k.source().begin.line),
                                    qualified(k.str()), "unknown key"});
        }
    }

private:
    const toml::node* take(std::string_view key) {
        m_known.insert(std::string(key));
        return m_table.get(key);
    }
    std::string qualified(std::string_view key) const {
        return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
    }
    void error(const toml::node& n, std::string_view key, std::string message) {
        m_errors.push_back({m_file, lineOf(n), qualified(key), std::move(message)});
    }

    const toml::table& m_table;
    std::string m_path;
    std::vector<ConfigError>& m_errors;
    const std::string& m_file;
    std::set<std::string> m_known;
};

void readRecord(TableReader& r, RecordMapping& m) {
    r.nonEmptyString("table", m.table);
    r.nonEmptyString("call_id", m.callId);
    r.nonEmptyString("request_digest", m.requestDigest);
    r.nonEmptyString("status", m.status);
    r.string("result_snapshot", m.resultSnapshot);
    r.string("first_source", m.firstSource);
    r.string("lock_version", m.lockVersion);
    r.nonEmptyString("created_at", m.createdAt);
    r.nonEmptyString("updated_at", m.updatedAt);
    r.nonEmptyString("expire_at", m.expireAt);
    r.words("status_values", m.statusValues, kRecordStatusNames);
    r.finish();
}

void readAttempt(TableReader& r, AttemptMapping& m) {
    r.boolean("enabled", m.enabled);
    r.nonEmptyString("table", m.table);
    r.nonEmptyString("id", m.id);
    r.nonEmptyString("call_id", m.callId);
    r.nonEmptyString("request_digest", m.requestDigest);
    r.nonEmptyString("source_instance", m.sourceInstance);
    r.string("trace_id", m.traceId);
    r.nonEmptyString("outcome", m.outcome);
    r.nonEmptyString("arrived_at", m.arrivedAt);
    r.string("finished_at", m.finishedAt);
    r.words("outcome_values", m.outcomeValues, kAttemptOutcomeNames);
    r.finish();
}

void readReceipt(TableReader& r, ReceiptMapping& m) {
    r.nonEmptyString("call_id", m.callId);
    r.nonEmptyString("status", m.status);
    r.string("result_ref", m.resultRef);
    r.string("finished_at", m.finishedAt);
    r.nonEmptyString("version", m.version);
    r.string("source_instance", m.sourceInstance);
    r.string("request_digest", m.requestDigest);
    r.words("status_values", m.statusValues, kRecordStatusNames);
    r.finish();
}

void readCallerEvent(TableReader& r, CallerEventMapping& m) {
    r.nonEmptyString("call_id", m.callId);
    r.nonEmptyString("state", m.state);
    r.nonEmptyString("at", m.at);
    r.nonEmptyString("instance", m.instance);
    r.string("attempt", m.attempt);
    r.string("biz_no", m.bizNo);
    r.string("request_digest", m.requestDigest);
    r.string("trace_id", m.traceId);
    r.words("state_values", m.stateValues, kCallerStateNames);
    r.finish();
}

void readConfig(const toml::table& root, Config& c, std::vector<ConfigError>& errors,
                const std::string& file) {
    TableReader top(root, "", errors, file);
    if (auto pg = top.table("postgres")) {
        pg->boolean("enabled", c.postgres.enabled);
        pg->dsn("dsn", c.postgres.dsn);
        pg->duration("poll_interval", c.postgres.pollInterval);
        pg->duration("statement_timeout", c.postgres.statementTimeout);
        pg->duration("clock_skew", c.postgres.clockSkew);
        pg->duration("quiet_after", c.postgres.quietAfter);
        if (auto rec = pg->table("record"))
            readRecord(*rec, c.postgres.record);
        if (auto att = pg->table("attempt"))
            readAttempt(*att, c.postgres.attempt);
        pg->finish();
    }
    if (auto k = top.table("kafka")) {
        k->nonEmptyString("brokers", c.kafka.brokers);
        k->string("receipt_topics", c.kafka.receiptTopics); // "" when no receipts are read
        k->string("caller_topics", c.kafka.callerTopics);
        k->nonEmptyString("partitioner", c.kafka.partitioner);
        k->properties("properties", c.kafka.properties);
        k->duration("quiet_after", c.kafka.quietAfter);
        if (auto rec = k->table("receipt"))
            readReceipt(*rec, c.kafka.receipt);
        if (auto ev = k->table("caller_event"))
            readCallerEvent(*ev, c.kafka.callerEvent);
        k->finish();
    }
    if (auto d = top.table("detect")) {
        d->duration("stuck_after", c.detect.stuckAfter);
        d->duration("receipt_grace", c.detect.receiptGrace);
        d->duration("caller_alert_after", c.detect.callerAlertAfter);
        d->duration("key_rotation_window", c.detect.keyRotationWindow);
        d->finish();
    }
    if (auto r = top.table("retention")) {
        r->duration("finished_calls", c.retention.finishedCalls);
        r->positiveInteger("max_calls", c.retention.maxCalls);
        r->positiveInteger("release_batch", c.retention.releaseBatch);
        r->finish();
    }
    if (auto pr = top.table("probe")) {
        pr->string("sql", c.probe.sql);
        pr->choice("key", c.probe.key, {"bizNo", "callId"});
        pr->duration("delay", c.probe.delay);
        pr->fraction("rate", c.probe.rate);
        pr->positiveInteger("max_per_second", c.probe.maxPerSecond);
        pr->duration("statement_timeout", c.probe.statementTimeout);
        pr->finish();
    }
    if (auto st = top.table("store")) {
        // Below this the store's fixed part (its first event chunk, the
        // interners) is the budget, and every call and anomaly would go.
        st->positiveInteger("max_bytes", c.retention.maxBytes, 16 << 20, "16 MiB (16777216)");
        st->positiveInteger("max_field_bytes", c.retention.maxFieldBytes);
        st->finish();
    }
    top.finish();

    static const std::set<std::string> partitioners{
        "random",         "consistent", "consistent_random", "murmur2",
        "murmur2_random", "fnv1a",      "fnv1a_random"};
    // A topic pattern (leading ^) must compile: checked here so a typo is a
    // config error naming the key, not an abort when the source starts.
    for (const auto& [key, spec] :
         {std::pair<const char*, const std::string&>{"kafka.receipt_topics", c.kafka.receiptTopics},
          {"kafka.caller_topics", c.kafka.callerTopics}}) {
        if (spec.empty() || spec.front() != '^')
            continue;
        if (const std::string why = topicPatternProblem(spec); !why.empty()) {
            int line = 0;
            if (const auto* n = root.at_path(key).node())
                line = lineOf(*n);
            errors.push_back(
                {file, line, key, "invalid regular expression \"" + spec + "\": " + why});
        }
    }
    if (!c.readsPostgres() && !c.readsKafka()) {
        int line = 0;
        if (const auto* n = root.at_path("postgres.enabled").node())
            line = lineOf(*n);
        errors.push_back({file, line, "postgres.enabled",
                          "nothing to read: PostgreSQL is disabled and kafka.receipt_topics and "
                          "kafka.caller_topics are both empty"});
    }
    if (c.probe.enabled()) {
        int line = 0;
        if (const auto* n = root.at_path("probe.sql").node())
            line = lineOf(*n);
        if (c.probe.sql.find("$1") == std::string::npos)
            errors.push_back({file, line, "probe.sql",
                              "must use $1 for the key (e.g. \"SELECT 1 FROM orders WHERE "
                              "order_no = $1\")"});
        if (!c.readsPostgres())
            errors.push_back(
                {file, line, "probe.sql", "the probe runs on PostgreSQL, which is disabled"});
    }
    if (!partitioners.count(c.kafka.partitioner)) {
        int line = 0;
        if (const auto* n = root.at_path("kafka.partitioner").node())
            line = lineOf(*n);
        errors.push_back({file, line, "kafka.partitioner",
                          "unknown partitioner \"" + c.kafka.partitioner +
                              "\" (expected murmur2_random, murmur2, consistent_random, "
                              "consistent, fnv1a, fnv1a_random or random)"});
    }
}

} // namespace

std::string topicPatternProblem(const std::string& pattern) {
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char ch = pattern[i];
        if (ch == '\\') {
            if (i + 1 < pattern.size() && pattern[i + 1] >= '1' && pattern[i + 1] <= '9')
                return "back-references are not supported in topic patterns";
            ++i; // the escaped character is a literal
        } else if (ch == '{') {
            std::size_t digits = 0;
            for (std::size_t j = i + 1; j < pattern.size() && pattern[j] != '}'; ++j) {
                digits = std::isdigit(static_cast<unsigned char>(pattern[j])) ? digits + 1 : 0;
                if (digits > 5)
                    return "a repetition count of more than 5 digits";
            }
        }
    }
    try {
        std::regex check(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        return e.what();
    }
    return {};
}

Config::Config() {
    postgres.record.statusValues = canonicalWords(kRecordStatusNames);
    postgres.attempt.outcomeValues = canonicalWords(kAttemptOutcomeNames);
    kafka.receipt.statusValues = canonicalWords(kRecordStatusNames);
    kafka.callerEvent.stateValues = canonicalWords(kCallerStateNames);
}

std::string ConfigError::toString() const {
    std::string out = file;
    if (line > 0)
        out += ":" + std::to_string(line);
    out += ": ";
    if (!key.empty())
        out += key + ": ";
    out += message;
    return out;
}

namespace {

// toml++ quotes what it could not read; on a line that holds a secret (a DSN,
// a password, a token, a key) that could be a piece of it, so it is hidden.
std::string tomlProblem(const toml::parse_error& e, std::string_view text, int line) {
    std::string what(e.description());
    std::size_t from = 0;
    for (int l = 1; l < line && from != std::string_view::npos; ++l) {
        from = text.find('\n', from);
        from = from == std::string_view::npos ? from : from + 1;
    }
    if (from == std::string_view::npos)
        return what;
    // The whole line: an inline table ({ "sasl.password" = … }) holds its keys there too.
    const std::string_view lineText = text.substr(from, text.find('\n', from) - from);
    if (!isSecretProperty(lineText) && lineText.find("dsn") == std::string_view::npos)
        return what;
    std::string out;
    bool quoted = false;
    for (const char c : what) {
        if (c == '\'' || c == '"') {
            out += c;
            if (!quoted)
                out += "\u2026";
            quoted = !quoted;
        } else if (!quoted) {
            out += c;
        }
    }
    return out + " (the value is not shown: the key holds a secret)";
}

} // namespace

ConfigResult parseConfigText(std::string_view text, const std::string& path) {
    ConfigResult result;
    result.config.sourcePath = path;
    try {
        const toml::table root = toml::parse(text, path);
        readConfig(root, result.config, result.errors, path);
        std::stable_sort(
            result.errors.begin(), result.errors.end(),
            [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
    } catch (const toml::parse_error& e) {
        const int line = static_cast<int>(e.source().begin.line);
        result.errors.push_back({path, line, "", "not valid TOML: " + tomlProblem(e, text, line)});
    }
    return result;
}

ConfigResult loadConfigFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        ConfigResult r;
        r.errors.push_back({path, 0, "", "cannot read the config file"});
        return r;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    return parseConfigText(buf.str(), path);
}

std::string defaultConfigPath() {
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
        return std::string(x) + "/callscope/callscope.toml";
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.config/callscope/callscope.toml";
}

} // namespace callscope
