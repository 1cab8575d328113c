// Lines of COPY ... TO STDOUT text, and binary COPY messages: any bytes (a table's text columns
// hold anything). Fields and NULL flags always come in pairs.
#include "connectors/copy_text.h"

#include <cstdint>
#include <cstdlib>

using namespace callscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> fields;
    std::vector<bool> nulls;
    splitCopyLine(line, fields, nulls);
    if (fields.size() != nulls.size() || fields.empty())
        std::abort();
    std::size_t total = 0;
    for (const auto& f : fields)
        total += f.size();
    if (total > size)
        std::abort(); // unescaping never makes text longer
    // The same bytes as a binary COPY message (with and without the header).
    const std::vector<CopyBinary> kinds{CopyBinary::Int, CopyBinary::Text, CopyBinary::Timestamp};
    for (const bool first : {true, false}) {
        const int got = splitBinaryCopyRow(line, first, kinds, fields, nulls);
        if (got < -1 || got > 1 ||
            (got == 1 && (fields.size() != kinds.size() || nulls.size() != kinds.size())))
            std::abort();
    }
    return 0;
}
