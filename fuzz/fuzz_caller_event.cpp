// Caller events as they come off a topic: any bytes.
#include "connectors/message_decoder.h"

#include <cstdint>
#include <cstdlib>

using namespace callscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Config config;
    static MessageDecoder decoder(config.kafka);
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    CallerObservation out;
    std::string why;
    if (!decoder.decodeCallerEvent(payload, MessageOrigin{0, 7, -1}, out, why) && why.empty())
        std::abort();
    return 0;
}
