// callscope: one executable, subcommands of SPEC §4 (app/command_line.cpp).
#include "app/command_line.h"

#include <cstdlib>
#include <cstring>

#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#ifdef __GLIBC__
    // Large arrays (the store's tables and vectors, frozen calls' blocks,
    // batches) come from mmap above 2 MiB and go back to the system when
    // freed, and free memory above 4 MiB at the top of the heap is returned:
    // glibc's default raises the mmap threshold after each such free, so a
    // store that is compacted again and again kept every old copy's pages
    // (a 1M-call scan peaked at 320-340 MiB, now 270-300 MiB, as fast).
    // A user's own setting of either (GLIBC_TUNABLES or MALLOC_*_) wins.
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    const auto set = [&](const char* tunable, const char* variable) {
        return (tunables && std::strstr(tunables, tunable)) || std::getenv(variable);
    };
    if (!set("glibc.malloc.mmap_threshold", "MALLOC_MMAP_THRESHOLD_"))
        mallopt(M_MMAP_THRESHOLD, 2 << 20);
    if (!set("glibc.malloc.trim_threshold", "MALLOC_TRIM_THRESHOLD_"))
        mallopt(M_TRIM_THRESHOLD, 4 << 20);
#endif
    return callscope::runCommandLine(argc, argv);
}
