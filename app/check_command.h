#pragma once
// `callscope check`: the first command a new user runs. Connects to every
// configured source and prints what it found there through the config's
// mapping, and which detections will run.
#include "app/command_options.h"

namespace callscope {

struct CheckOptions {
    std::optional<std::string> config;
    int sample = 5; // rows per table and messages per topic to decode
};

// 0 when every configured source answered and the mapping fits (warnings,
// such as a missing index or topic, are printed but do not fail), 1 when a
// source could not be read, 2 when the config file is invalid or its mapping
// does not fit the database (as scan would say).
int runCheckCommand(const CheckOptions& options);

} // namespace callscope
