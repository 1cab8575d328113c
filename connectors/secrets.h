#pragma once
// Secrets in a config never leave the process (SPEC §8): DSNs are shown
// rebuilt by libpq's own parser without their secret fields, Kafka properties
// that hold secrets are never printed, and every error text from a server or
// a client library is scrubbed of the secret values before it is shown.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

struct Config;

// The DSN for display, in keyword form whatever form it was written in
// (keyword/value or postgresql:// URI), parsed by PQconninfoParse and rebuilt
// without password, sslpassword and sslkey. A DSN libpq cannot parse is never
// shown: "(a DSN libpq cannot parse)".
std::string redactDsn(const std::string& dsn);

// Why libpq cannot parse the DSN, with the fragments it quotes hidden (they
// can be a piece of a password), or nullopt when it parses.
std::optional<std::string> dsnProblem(const std::string& dsn);

// True for a librdkafka property whose value is a secret: its name contains
// password, secret, token or key, or it is sasl.oauthbearer.config.
bool isSecretProperty(std::string_view name);

// The secret values a config holds (the DSN's password and sslpassword, the
// values of secret Kafka properties), for scrubSecrets.
std::vector<std::string> secretValues(const Config& config);
std::vector<std::string> dsnSecrets(const std::string& dsn);

// The DSN with connect_timeout=5 unless it names one (key=value and URI
// forms): a server that does not answer is an error, not a hang.
std::string dsnWithConnectTimeout(const std::string& dsn);
// The values of the secret properties, and the pieces of structured ones.
std::vector<std::string> propertySecrets(const std::map<std::string, std::string>& properties);

// The text with every occurrence of every secret replaced by ***.
std::string scrubSecrets(std::string text, std::vector<std::string> secrets);

} // namespace callscope
