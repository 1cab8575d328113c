#include "connectors/message_decoder.h"

#include <simdjson.h>

#include <array>
#include <initializer_list>

namespace callscope {

struct MessageDecoder::Impl {
    explicit Impl(const KafkaConfig& c)
        : receipt(c.receipt), caller(c.callerEvent),
          receiptStatus(c.receipt.statusValues, kRecordStatusNames),
          callerState(c.callerEvent.stateValues, kCallerStateNames) {}

    ReceiptMapping receipt;
    CallerEventMapping caller;
    WordMap<RecordStatus> receiptStatus;
    WordMap<CallerState> callerState;
    // The DOM parser validates the whole document (structure and UTF-8), so a
    // message with trailing garbage is refused rather than half read.
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    // The mapped fields of the message being decoded, found in one pass over
    // its keys (the first of a repeated key wins, as a lookup by name would).
    static constexpr std::size_t kMaxFields = 8;
    std::array<const std::string*, kMaxFields> names{};
    std::array<simdjson::dom::element, kMaxFields> found{};
    std::array<bool, kMaxFields> present{};
    std::size_t fieldCount = 0;
    // Per kind of message (receipt, caller event): which name each of the
    // first kLearned keys matched last time.
    // (Only when the kind's names are distinct: two fields mapped to one
    // key take it in order, the first unfilled one first.)
    static constexpr std::size_t kLearned = 16;
    std::array<std::array<std::uint8_t, kLearned>, 2> learned{};
    std::array<int, 2> namesDistinct{-1, -1}; // -1: not yet looked at

    void gather(std::size_t kind, std::initializer_list<const std::string*> fields) {
        fieldCount = 0;
        for (const std::string* f : fields) {
            names[fieldCount] = f;
            present[fieldCount] = false;
            ++fieldCount;
        }
        std::size_t left = fieldCount;
        if (left == 0)
            return;
        // Producers write their fields in one order: the name found at this
        // position in the last message of the kind is tried first (a key is
        // compared once, not with each name in turn).
        std::array<std::uint8_t, kLearned>& expected = learned[kind];
        if (namesDistinct[kind] < 0) {
            namesDistinct[kind] = 1;
            for (std::size_t a = 0; a < fieldCount; ++a)
                for (std::size_t b = a + 1; b < fieldCount; ++b)
                    if (!names[a]->empty() && *names[a] == *names[b])
                        namesDistinct[kind] = 0;
        }
        const bool hints = namesDistinct[kind] == 1;
        const auto take = [&](std::size_t j, const simdjson::dom::key_value_pair& field) {
            if (present[j] || names[j]->size() != field.key.size() || names[j]->empty() ||
                field.key != *names[j])
                return false;
            found[j] = field.value;
            present[j] = true;
            --left;
            return true;
        };
        std::size_t position = 0;
        for (const auto field : simdjson::dom::object(root)) {
            const std::size_t hint = hints && position < kLearned ? expected[position] : fieldCount;
            if (hint >= fieldCount || !take(hint, field))
                for (std::size_t j = 0; j < fieldCount; ++j)
                    if (j != hint && take(j, field)) {
                        if (position < kLearned)
                            expected[position] = static_cast<std::uint8_t>(j);
                        break;
                    }
            if (left == 0)
                break;
            ++position;
        }
    }

    // The gathered value of `name` (one of the fields given to gather).
    bool get(const std::string& name, simdjson::dom::element& e) const {
        for (std::size_t j = 0; j < fieldCount; ++j)
            if (names[j] == &name) {
                if (!present[j])
                    return false;
                e = found[j];
                return true;
            }
        return false;
    }

    // Parses into `root`; false with the reason.
    bool parse(std::string_view payload, std::string& why) {
        if (payload.size() > kMaxMessageBytes) {
            why = "oversized";
            return false;
        }
        const auto err = parser.parse(payload.data(), payload.size()).get(root);
        if (err == simdjson::UTF8_ERROR) {
            why = "invalid UTF-8";
            return false;
        }
        if (err) {
            why = "not JSON";
            return false;
        }
        if (!root.is_object()) {
            why = "not a JSON object";
            return false;
        }
        return true;
    }

    enum class Field { Missing, Ok, WrongType };

    Field string(const std::string& name, std::string_view& out) {
        if (name.empty())
            return Field::Missing;
        simdjson::dom::element e;
        if (!get(name, e) || e.is_null())
            return Field::Missing;
        return e.get_string().get(out) ? Field::WrongType : Field::Ok;
    }

    Field integer(const std::string& name, std::int64_t& out) {
        if (name.empty())
            return Field::Missing;
        simdjson::dom::element e;
        if (!get(name, e) || e.is_null())
            return Field::Missing;
        if (!e.get_int64().get(out))
            return Field::Ok;
        std::uint64_t u = 0;
        if (!e.get_uint64().get(u)) {
            out = INT64_MAX; // absurd but an integer
            return Field::Ok;
        }
        return Field::WrongType;
    }

    // ISO-8601 text or integer epoch milliseconds.
    Field time(const std::string& name, EpochMillis& out) {
        if (name.empty())
            return Field::Missing;
        simdjson::dom::element e;
        if (!get(name, e) || e.is_null())
            return Field::Missing;
        std::int64_t ms = 0;
        if (!e.get_int64().get(ms)) {
            out = ms;
            return Field::Ok;
        }
        std::string_view text;
        if (e.get_string().get(text))
            return Field::WrongType;
        const auto t = parseTimestamp(text);
        if (!t)
            return Field::WrongType;
        out = *t;
        return Field::Ok;
    }

    // A required, non-empty text field.
    bool requiredString(const std::string& name, std::string_view& out, std::string& why) {
        switch (string(name, out)) {
        case Field::Missing:
            why = "missing " + name;
            return false;
        case Field::WrongType:
            why = "wrong type: " + name;
            return false;
        case Field::Ok:
            break;
        }
        if (out.empty()) {
            why = "missing " + name;
            return false;
        }
        return true;
    }

    // Optional text fields: absent is fine, another type is not.
    bool optionalString(const std::string& name, std::string& out, std::string& why) {
        std::string_view v;
        switch (string(name, v)) {
        case Field::Ok:
            out.assign(v);
            return true;
        case Field::Missing:
            return true;
        case Field::WrongType:
            why = "wrong type: " + name;
            return false;
        }
        return false;
    }
};

MessageDecoder::MessageDecoder(const KafkaConfig& c) : m(std::make_unique<Impl>(c)) {}
MessageDecoder::~MessageDecoder() = default;

bool MessageDecoder::decodeReceipt(std::string_view payload, const MessageOrigin& origin,
                                   ReceiptObservation& out, std::string& why) {
    if (!m->parse(payload, why))
        return false;
    const ReceiptMapping& f = m->receipt;
    m->gather(0, {&f.callId, &f.status, &f.version, &f.finishedAt, &f.resultRef, &f.sourceInstance,
                  &f.requestDigest});
    std::string_view callId, status;
    if (!m->requiredString(f.callId, callId, why) || !m->requiredString(f.status, status, why))
        return false;
    const auto st = m->receiptStatus.find(status);
    if (!st) {
        why = "unknown status";
        return false;
    }
    std::int64_t version = 0;
    switch (m->integer(f.version, version)) {
    case Impl::Field::Missing:
        why = "missing " + f.version;
        return false;
    case Impl::Field::WrongType:
        why = "wrong type: " + f.version;
        return false;
    case Impl::Field::Ok:
        break;
    }
    out = ReceiptObservation{};
    out.callId.assign(callId);
    out.status = *st;
    out.version = version;
    out.origin = origin;
    if (m->time(f.finishedAt, out.finishedAt) == Impl::Field::WrongType) {
        why = "bad timestamp: " + f.finishedAt;
        return false;
    }
    return m->optionalString(f.resultRef, out.resultRef, why) &&
           m->optionalString(f.sourceInstance, out.sourceInstance, why) &&
           m->optionalString(f.requestDigest, out.digest, why);
}

bool MessageDecoder::decodeCallerEvent(std::string_view payload, const MessageOrigin& origin,
                                       CallerObservation& out, std::string& why) {
    if (!m->parse(payload, why))
        return false;
    const CallerEventMapping& f = m->caller;
    m->gather(1, {&f.callId, &f.state, &f.at, &f.attempt, &f.instance, &f.bizNo, &f.requestDigest,
                  &f.traceId});
    std::string_view callId, state;
    if (!m->requiredString(f.callId, callId, why) || !m->requiredString(f.state, state, why))
        return false;
    const auto st = m->callerState.find(state);
    if (!st) {
        why = "unknown state";
        return false;
    }
    out = CallerObservation{};
    out.callId.assign(callId);
    out.state = *st;
    out.origin = origin;
    switch (m->time(f.at, out.at)) {
    case Impl::Field::Missing:
        why = "missing " + f.at;
        return false;
    case Impl::Field::WrongType:
        why = "bad timestamp: " + f.at;
        return false;
    case Impl::Field::Ok:
        break;
    }
    std::int64_t attempt = 0;
    if (m->integer(f.attempt, attempt) == Impl::Field::WrongType) {
        why = "wrong type: " + f.attempt;
        return false;
    }
    out.attempt = static_cast<int>(std::clamp<std::int64_t>(attempt, 0, 1'000'000));
    return m->optionalString(f.instance, out.instance, why) &&
           m->optionalString(f.bizNo, out.bizNo, why) &&
           m->optionalString(f.requestDigest, out.digest, why) &&
           m->optionalString(f.traceId, out.traceId, why);
}

std::string MessageDecoder::sampleOf(std::string_view payload) {
    std::string out;
    for (const char c : payload.substr(0, 160)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u >= 0x20 && u < 0x7f) ? c : '.';
    }
    if (payload.size() > 160)
        out += "...";
    return out;
}

} // namespace callscope
