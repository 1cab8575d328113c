// Config files as users write them: any text. The loader accepts it or
// refuses it naming what is wrong; it never crashes.
#include "connectors/config.h"

#include <cstdint>
#include <cstdlib>

using namespace callscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const ConfigResult r = parseConfigText(text, "fuzz.toml");
    for (const ConfigError& e : r.errors)
        if (e.toString().empty())
            std::abort();
    return 0;
}
