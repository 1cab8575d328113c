#pragma once
// Decodes receipt and caller-event messages (SPEC §1.3, §1.4) with simdjson,
// through the field and value mapping of the config. A message that cannot be
// used yields a Rejection with the reason, never an exception.
#include "connectors/config.h"
#include "models/observations.h"

#include <memory>
#include <string_view>
#include <unordered_map>

namespace callscope {

inline constexpr std::size_t kMaxMessageBytes = 1 << 20; // larger is refused as oversized

// user word -> canonical enum value, built once from the config's value words
template <typename Enum> class WordMap {
public:
    WordMap() = default;
    template <std::size_t N>
    WordMap(const ValueWords& words, const std::array<std::string_view, N>& names) {
        for (const auto& [canonical, list] : words)
            for (std::size_t i = 0; i < N; ++i)
                if (names[i] == canonical)
                    for (const auto& w : list)
                        m_map.emplace(w, static_cast<Enum>(i));
    }
    std::optional<Enum> find(std::string_view word) const {
        const auto it = m_map.find(word); // no string made per message
        if (it == m_map.end())
            return std::nullopt;
        return it->second;
    }

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::unordered_map<std::string, Enum, Hash, std::equal_to<>> m_map;
};

class MessageDecoder {
public:
    explicit MessageDecoder(const KafkaConfig& config);
    ~MessageDecoder();
    MessageDecoder(const MessageDecoder&) = delete;
    MessageDecoder& operator=(const MessageDecoder&) = delete;

    // true and `out` filled, or false and `why` says what was wrong.
    bool decodeReceipt(std::string_view payload, const MessageOrigin& origin,
                       ReceiptObservation& out, std::string& why);
    bool decodeCallerEvent(std::string_view payload, const MessageOrigin& origin,
                           CallerObservation& out, std::string& why);

    // The start of a payload, made printable, for samples.
    static std::string sampleOf(std::string_view payload);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
