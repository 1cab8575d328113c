#include "models/observations.h"

namespace callscope {
namespace {

// A short printable head of an oversized value, for the rejection sample.
std::string headOf(const char* field, const std::string& value) {
    std::string out = std::string(field) + " of " + std::to_string(value.size()) + " bytes: ";
    for (const char ch : value.substr(0, 40))
        out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    return out + "...";
}

// Moves the observations whose identity fields exceed `maxBytes` into
// `rejected`; returns how many moved.
template <typename T, typename Fields>
std::size_t sift(std::vector<T>& items, std::size_t maxBytes, const char* where,
                 std::vector<Rejection>& rejected, Fields fields) {
    std::size_t moved = 0;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const char* bad = nullptr;
        const std::string* value = nullptr;
        fields(items[i], [&](const char* name, const std::string& v) {
            if (!bad && v.size() > maxBytes) {
                bad = name;
                value = &v;
            }
        });
        if (bad) {
            rejected.push_back({"oversized field", where, headOf(bad, *value)});
            ++moved;
            continue;
        }
        if (kept != i)
            items[kept] = std::move(items[i]);
        ++kept;
    }
    items.resize(kept);
    return moved;
}

} // namespace

std::size_t rejectOversized(ObservationBatch& b, std::size_t maxBytes) {
    std::size_t n = 0;
    n +=
        sift(b.records, maxBytes, "record", b.rejected, [](const RecordObservation& o, auto check) {
            check("callId", o.callId);
            check("digest", o.digest);
            check("firstSource", o.firstSource);
        });
    n += sift(b.attempts, maxBytes, "attempt", b.rejected,
              [](const AttemptObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("sourceInstance", o.sourceInstance);
                  check("traceId", o.traceId);
              });
    n += sift(b.receipts, maxBytes, "receipt", b.rejected,
              [](const ReceiptObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("sourceInstance", o.sourceInstance);
              });
    n += sift(b.callerEvents, maxBytes, "caller event", b.rejected,
              [](const CallerObservation& o, auto check) {
                  check("callId", o.callId);
                  check("digest", o.digest);
                  check("instance", o.instance);
                  check("bizNo", o.bizNo);
                  check("traceId", o.traceId);
              });
    return n;
}

} // namespace callscope
