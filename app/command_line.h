#pragma once
// The command line of SPEC §4: one option table (CLI11) for every subcommand,
// its generated help, `callscope help SUBCOMMAND`, --version, the bash
// completion script, and the dispatch to the subcommands.

namespace callscope {

// Parses argv, runs the chosen subcommand (gui when none is named) and returns
// the process exit code: 0 ok, 1 runtime failure, 2 bad usage or config.
int runCommandLine(int argc, char** argv);

} // namespace callscope
