#pragma once
#include <string>
#include <vector>

namespace callscope {
int runGuiCommand(int argc, char** argv, std::vector<std::string> args);
int runDemoCommand(int argc, char** argv, std::vector<std::string> args);
} // namespace callscope
