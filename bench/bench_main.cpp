// Decoding benchmarks. The ingest benchmarks of SPEC §7 join them with the
// ingest-and-detections work.
#include "models/timestamp.h"

#include <benchmark/benchmark.h>

namespace {

void BM_ParseIsoTimestamp(benchmark::State& state) {
    const std::string text = "2024-05-20T10:29:03.120+02:00";
    for (auto _ : state)
        benchmark::DoNotOptimize(callscope::parseTimestamp(text));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseIsoTimestamp);

} // namespace
