#pragma once
// callscope gui and callscope demo (SPEC §4.1, §6).
#include "app/command_options.h"

namespace callscope {
int runGuiCommand(int argc, char** argv, const GuiOptions& options);
int runDemoCommand(int argc, char** argv, const DemoOptions& options);
} // namespace callscope
