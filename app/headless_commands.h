#pragma once
// scan, watch and inspect (SPEC §4.2): the headless surfaces.
#include "app/command_options.h"

namespace callscope {
class Monitor;

// After a window load: the facts about the sources (a configured topic that
// does not exist) and the detections that cannot fire, one line each on stderr.
void printSourceFacts(const char* command, Monitor& monitor, bool detections = true);

int runScanCommand(const ScanOptions& options);
int runAdviseCommand(const AdviseOptions& options);
int runWatchCommand(const WatchOptions& options);
int runInspectCommand(const InspectOptions& options);
} // namespace callscope
