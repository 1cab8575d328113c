#pragma once
// callscope sim (SPEC §6): drives PostgreSQL and Kafka with simulated traffic.
#include "app/command_options.h"

namespace callscope {
int runSimCommand(const SimCommandOptions& options);
} // namespace callscope
