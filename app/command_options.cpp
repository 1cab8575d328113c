#include "app/command_options.h"

#include "models/duration.h"
#include "models/visible_text.h"

#include <filesystem>
#include <iostream>

namespace callscope {

int usageError(std::string_view command, std::string_view message) {
    const std::string who = command.empty() ? "callscope" : "callscope " + std::string(command);
    std::cerr << who << ": " << visibleText(message) << "\n("
              << (command.empty() ? "callscope --help" : who + " --help")
              << " lists the options)\n";
    return ExitUsage;
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
            std::cerr << "callscope: " << visibleText(e.toString()) << '\n';
        std::cerr << "callscope: the config file " << visibleText(file) << " was refused\n";
        return std::nullopt;
    }
    return std::move(r.config);
}

std::string_view callscopeVersion() {
    return CALLSCOPE_VERSION;
}

} // namespace callscope
