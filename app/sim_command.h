#pragma once
#include <string>
#include <vector>

namespace callscope {
int runSimCommand(std::vector<std::string> args);
extern const char* const kSimUsage;
} // namespace callscope
