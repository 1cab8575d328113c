#include "app/cli_args.h"

#include <filesystem>
#include <iostream>

namespace callscope {

void CliArgs::ensureUsed() {
    if (m_used.size() != m_words.size())
        m_used.assign(m_words.size(), false);
}

std::vector<std::string> CliArgs::values(const std::string& name) {
    ensureUsed();
    std::vector<std::string> out;
    const std::string prefix = name + "=";
    for (std::size_t i = 0; i < m_words.size(); ++i) {
        if (m_words[i] == name) {
            m_used[i] = true;
            if (i + 1 >= m_words.size()) {
                m_error = name + " needs a value";
                continue;
            }
            m_used[++i] = true;
            out.push_back(m_words[i]);
        } else if (m_words[i].rfind(prefix, 0) == 0) {
            m_used[i] = true;
            out.push_back(m_words[i].substr(prefix.size()));
        }
    }
    return out;
}

std::optional<std::string> CliArgs::value(const std::string& name) {
    auto all = values(name);
    if (all.empty())
        return std::nullopt;
    return all.back();
}

bool CliArgs::flag(const std::string& name) {
    ensureUsed();
    bool found = false;
    for (std::size_t i = 0; i < m_words.size(); ++i)
        if (m_words[i] == name) {
            m_used[i] = true;
            found = true;
        }
    return found;
}

std::vector<std::string> CliArgs::positional() {
    ensureUsed();
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m_words.size(); ++i)
        if (!m_used[i] && (m_words[i].empty() || m_words[i][0] != '-')) {
            m_used[i] = true;
            out.push_back(m_words[i]);
        }
    return out;
}

bool CliArgs::finish(std::string& error) {
    ensureUsed();
    if (!m_error.empty()) {
        error = m_error;
        return false;
    }
    for (std::size_t i = 0; i < m_words.size(); ++i)
        if (!m_used[i]) {
            error = "unknown option or argument: " + m_words[i];
            return false;
        }
    return true;
}

std::optional<EpochMillis> parseWhen(const std::string& text, EpochMillis now) {
    if (const auto d = parseDuration(text))
        return now - d->count();
    return parseTimestamp(text);
}

std::optional<Config> loadConfigOrReport(const std::optional<std::string>& path) {
    std::string file;
    if (path) {
        file = *path;
    } else {
        file = defaultConfigPath();
        std::error_code ec;
        if (!std::filesystem::exists(file, ec))
            return Config{}; // the reference deployment of SPEC §1
    }
    ConfigResult r = loadConfigFile(file);
    if (!r.ok()) {
        for (const auto& e : r.errors)
            std::cerr << "callscope: " << e.toString() << '\n';
        std::cerr << "callscope: the config file " << file << " was refused\n";
        return std::nullopt;
    }
    return std::move(r.config);
}

} // namespace callscope
