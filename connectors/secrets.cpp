#include "connectors/secrets.h"

#include "connectors/config.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>

namespace callscope {
namespace {

struct OptionsFree {
    void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};
using Options = std::unique_ptr<PQconninfoOption, OptionsFree>;

// Parses like libpq does when it connects; error receives libpq's message.
Options parse(const std::string& dsn, std::string* error) {
    char* err = nullptr;
    Options o(PQconninfoParse(dsn.c_str(), &err));
    if (err) {
        if (error)
            *error = err;
        PQfreemem(err);
    }
    return o;
}

bool secretKeyword(const PQconninfoOption& o) {
    const std::string_view k = o.keyword;
    // dispchar "*" is libpq's own mark for a field to hide (password, sslpassword).
    return (o.dispchar && o.dispchar[0] == '*') || k == "password" || k == "sslpassword" ||
           k == "sslkey";
}

std::string quoteValue(const std::string& v) {
    const bool plain = !v.empty() && std::none_of(v.begin(), v.end(), [](char c) {
        return c == ' ' || c == '\'' || c == '\\' || std::iscntrl(static_cast<unsigned char>(c));
    });
    if (plain)
        return v;
    std::string out = "'";
    for (const char c : v) {
        if (c == '\'' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "'";
}

bool isKeyword(std::string_view word) {
    Options defaults(PQconndefaults());
    for (const PQconninfoOption* o = defaults.get(); o && o->keyword; ++o)
        if (word == o->keyword)
            return true;
    return false;
}

} // namespace

std::string redactDsn(const std::string& dsn) {
    const Options o = parse(dsn, nullptr);
    if (!o)
        return "(a DSN libpq cannot parse)";
    std::string out;
    for (const PQconninfoOption* p = o.get(); p->keyword; ++p) {
        if (!p->val || secretKeyword(*p))
            continue;
        out += (out.empty() ? "" : " ") + std::string(p->keyword) + "=" + quoteValue(p->val);
    }
    return out;
}

std::optional<std::string> dsnProblem(const std::string& dsn) {
    std::string error;
    if (parse(dsn, &error))
        return std::nullopt;
    while (!error.empty() && (error.back() == '\n' || error.back() == ' '))
        error.pop_back();
    // libpq quotes what it could not read ("missing "=" after "cret""): that
    // can be a piece of a password. Keywords and punctuation stay; from the
    // first other quoted piece to the last quote of the message all is hidden,
    // since a quote inside the secret would shift any pairing of quotes.
    std::string out;
    std::size_t i = 0;
    while (i < error.size()) {
        const std::size_t open = error.find('"', i);
        const std::size_t close = open == std::string::npos ? open : error.find('"', open + 1);
        if (close == std::string::npos) {
            out += error.substr(i);
            break;
        }
        const std::string quoted = error.substr(open + 1, close - open - 1);
        const bool harmless =
            isKeyword(quoted) ||
            (quoted.size() == 1 && !std::isalnum(static_cast<unsigned char>(quoted[0])));
        if (!harmless) {
            out += error.substr(i, open + 1 - i) + "\u2026\"";
            i = error.rfind('"') + 1;
            out += error.substr(i);
            break;
        }
        out += error.substr(i, open + 1 - i) + quoted + '"';
        i = close + 1;
    }
    return out.empty() ? std::string("libpq cannot parse it") : out;
}

bool isSecretProperty(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* word : {"password", "secret", "token", "key"})
        if (n.find(word) != std::string::npos)
            return true;
    return n == "sasl.oauthbearer.config";
}

std::vector<std::string> dsnSecrets(const std::string& dsn) {
    std::vector<std::string> out;
    if (const Options o = parse(dsn, nullptr)) {
        for (const PQconninfoOption* p = o.get(); p->keyword; ++p)
            if (p->val && *p->val && secretKeyword(*p) && std::string_view(p->keyword) != "sslkey")
                out.emplace_back(p->val);
    }
    return out;
}

std::vector<std::string> propertySecrets(const std::map<std::string, std::string>& properties) {
    std::vector<std::string> out;
    for (const auto& [k, v] : properties) {
        if (!isSecretProperty(k) || v.empty())
            continue;
        out.push_back(v);
        // Structured values (sasl.oauthbearer.config "principal=p secret=s"):
        // an error may quote one piece of them.
        std::istringstream words(v);
        for (std::string w; words >> w;) {
            const std::size_t eq = w.find('=');
            const std::string piece = eq == std::string::npos ? w : w.substr(eq + 1);
            if (piece.size() >= 4 && piece != v)
                out.push_back(piece);
        }
    }
    return out;
}

std::vector<std::string> secretValues(const Config& config) {
    std::vector<std::string> out = dsnSecrets(config.postgres.dsn);
    for (std::string& s : propertySecrets(config.kafka.properties))
        out.push_back(std::move(s));
    return out;
}

std::string scrubSecrets(std::string text, std::vector<std::string> secrets) {
    // Longest first: a secret that contains another is hidden whole.
    std::sort(secrets.begin(), secrets.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const std::string& s : secrets) {
        if (s.empty())
            continue;
        for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 3))
            text.replace(at, s.size(), "***");
    }
    return text;
}

std::string dsnWithConnectTimeout(const std::string& dsn) {
    if (dsn.find("connect_timeout") != std::string::npos)
        return dsn;
    if (dsn.find("://") == std::string::npos)
        return dsn + " connect_timeout=5";
    return dsn + (dsn.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=5";
}

} // namespace callscope
