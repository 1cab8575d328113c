// The simulated callers' receipt consumer: each receipt decoded (callId,
// status, version) and delivered to the caller that started the call.
#include "sim/receipt_listener.h"

#include <simdjson.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace callscope::sim {
namespace {

bool decode(simdjson::ondemand::parser& parser, const std::string& value, ReceiptNote& out) {
    simdjson::padded_string json(value);
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc))
        return false;
    std::string_view callId, status;
    std::int64_t version = 0;
    if (doc["callId"].get_string().get(callId) || doc["status"].get_string().get(status) ||
        doc["version"].get_int64().get(version))
        return false;
    const auto s = recordStatusFromName(status);
    if (!s)
        return false;
    out.callId = std::string(callId);
    out.status = *s;
    out.version = static_cast<int>(version);
    return true;
}

} // namespace

void ReceiptListener::run(const std::atomic<bool>& stop) {
    simdjson::ondemand::parser parser;
    while (!stop) {
        for (const KafkaMessage& m : m_reader->poll(100)) {
            ReceiptNote note;
            if (!decode(parser, m.value, note))
                continue;
            m_ctx.receiptsSeen++;
            int owner = -1;
            {
                std::lock_guard lock(m_ctx.mutex);
                auto it = m_ctx.callOwner.find(note.callId);
                if (it != m_ctx.callOwner.end())
                    owner = it->second;
            }
            if (owner >= 0)
                m_ctx.deliver(owner, std::move(note));
        }
    }
}

} // namespace callscope::sim
