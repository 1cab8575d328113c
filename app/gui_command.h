#pragma once
// callscope gui and callscope demo (SPEC §4.1, §6).
#include "app/command_options.h"

#include <QString>

namespace callscope {
struct Config;

// The dashboard's header (its window title): the DSN redacted, the brokers.
QString sourcesText(const Config& config);

int runGuiCommand(int argc, char** argv, const GuiOptions& options);
int runDemoCommand(int argc, char** argv, const DemoOptions& options);
} // namespace callscope
