#pragma once
#include "app/command_options.h"
#include "app/monitor.h"
#include "models/report.h"

#include <set>
#include <string>
#include <vector>

namespace callscope {

struct ReportRequest {
    std::vector<std::string> callIds;             // a section each; or, when empty:
    EpochMillis since = kNoTime, until = kNoTime; // every anomaly of the window
    std::set<AnomalyKind> kinds;                  // only these kinds (all when empty)
    bool includePayloads = false;
};

// Builds the report from what the monitor holds (and reads cold callIds).
Report buildReport(Monitor& monitor, const ReportRequest& request, const std::atomic<bool>& cancel);

int runReportCommand(int argc, char** argv, const ReportOptions& options);

} // namespace callscope
