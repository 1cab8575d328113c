// callscope: one executable, subcommands of SPEC §4 (app/command_line.cpp).
#include "app/command_line.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    // Large arrays (the store's tables and vectors, frozen calls' blocks,
    // batches) come from mmap above 2 MiB and go back to the system when
    // freed, and free memory above 4 MiB at the top of the heap is returned:
    // glibc's default raises the mmap threshold after each such free, so a
    // store that is compacted again and again kept every old copy's pages
    // (a 1M-call scan peaked at 320-340 MiB, now 270-280 MiB, as fast).
    // A user's own GLIBC_TUNABLES for malloc win.
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (!tunables || !std::strstr(tunables, "glibc.malloc.")) {
        mallopt(M_MMAP_THRESHOLD, 2 << 20);
        mallopt(M_TRIM_THRESHOLD, 4 << 20);
    }
    return callscope::runCommandLine(argc, argv);
}
