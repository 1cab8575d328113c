#pragma once
#include <string>
#include <vector>

namespace callscope {
int runScanCommand(std::vector<std::string> args);
int runWatchCommand(std::vector<std::string> args);
int runInspectCommand(std::vector<std::string> args);
} // namespace callscope
