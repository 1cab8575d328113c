#pragma once
// scan, watch and inspect (SPEC §4.2): the headless surfaces.
#include "app/command_options.h"

namespace callscope {
int runScanCommand(const ScanOptions& options);
int runWatchCommand(const WatchOptions& options);
int runInspectCommand(const InspectOptions& options);
} // namespace callscope
