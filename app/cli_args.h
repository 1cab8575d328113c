#pragma once
// Command-line words after the subcommand: "--name value", "--name=value",
// flags and positional words, with errors that say which option is wrong.
#include "connectors/config.h"
#include "models/timestamp.h"

#include <optional>
#include <string>
#include <vector>

namespace callscope {

class CliArgs {
public:
    CliArgs(std::vector<std::string> words) : m_words(std::move(words)) {}

    // The value of --name (last one wins); nullopt when absent. Records an
    // error when the option is present without a value.
    std::optional<std::string> value(const std::string& name);
    std::vector<std::string> values(const std::string& name); // every occurrence
    bool flag(const std::string& name);
    std::vector<std::string> positional();
    // Errors for words nobody asked about; call after every lookup.
    bool finish(std::string& error);

private:
    std::vector<std::string> m_words;
    std::vector<bool> m_used;
    std::string m_error;
    void ensureUsed();
};

// A time given on the command line: a duration ago ("1h") or an ISO-8601 time.
std::optional<EpochMillis> parseWhen(const std::string& text, EpochMillis now);

// Exit codes of SPEC §4.
enum ExitCode { ExitOk = 0, ExitRuntime = 1, ExitUsage = 2 };

// Loads --config (or the default path when it exists, else built-in defaults).
// Prints the errors and returns nullopt when the file is invalid.
std::optional<Config> loadConfigOrReport(const std::optional<std::string>& path);

} // namespace callscope
