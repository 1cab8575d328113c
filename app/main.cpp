// callscope: one executable, subcommands of SPEC §4 (app/command_line.cpp).
#include "app/command_line.h"

int main(int argc, char** argv) {
    return callscope::runCommandLine(argc, argv);
}
