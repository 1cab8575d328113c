// Receipts as they come off a topic: any bytes. The decoder must answer
// true with a receipt or false with a reason, never crash or read out of bounds.
#include "connectors/message_decoder.h"

#include <cstdint>
#include <cstdlib>

using namespace callscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Config config;
    static MessageDecoder decoder(config.kafka);
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    ReceiptObservation out;
    std::string why;
    if (!decoder.decodeReceipt(payload, MessageOrigin{3, 1284, 1'716'200'000'000}, out, why) &&
        why.empty())
        std::abort(); // a refusal always says why
    (void)MessageDecoder::sampleOf(payload);
    return 0;
}
