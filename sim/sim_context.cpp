// The simulator's shared context: faults, digests and ids, and what the
// actors call on SimContext (failure, truth, caller events, routing).
#include "sim/sim_context.h"

#include "connectors/secrets.h"
#include "sim/caller.h"
#include "sim/kafka_writer.h"
#include "sim/server.h"

#include <QCryptographicHash>

namespace callscope::sim {

Fault faultFor(AnomalyKind k) {
    switch (k) {
    case AnomalyKind::StuckProcessing:
        return Fault::Stuck;
    case AnomalyKind::DigestConflict:
        return Fault::DigestConflict;
    case AnomalyKind::DuplicateCaller:
        return Fault::DuplicateCaller;
    case AnomalyKind::KeyRotation:
        return Fault::KeyRotation;
    case AnomalyKind::ConcurrentExecution:
        return Fault::ConcurrentExecution;
    case AnomalyKind::ExpiredReplay:
        return Fault::ExpiredReplay;
    case AnomalyKind::ReceiptMissing:
        return Fault::ReceiptMissing;
    case AnomalyKind::StateMismatch:
        return Fault::StateMismatch;
    case AnomalyKind::ReceiptRegression:
        return Fault::ReceiptRegression;
    case AnomalyKind::CallerStuck:
        return Fault::CallerStuck;
    case AnomalyKind::OrphanReceipt:
        return Fault::OrphanReceipt;
    case AnomalyKind::CallIdRewritten:
        return Fault::CallIdRewritten;
    case AnomalyKind::EffectMissing:
        return Fault::EffectMissing;
    }
    return Fault::None;
}

std::string sha256Hex(const std::string& text) {
    const QByteArray h =
        QCryptographicHash::hash(QByteArray::fromStdString(text), QCryptographicHash::Sha256);
    return h.toHex().toStdString();
}

std::string randomHex(std::mt19937_64& rng, int chars) {
    static const char* digits = "0123456789abcdef";
    std::string s(chars, '0');
    for (auto& c : s)
        c = digits[rng() & 15];
    return s;
}

SimContext::SimContext(const Config& c, const SimOptions& o) : config(c), opt(o) {}
SimContext::~SimContext() = default;

void SimContext::fail(const std::string& why) {
    std::lock_guard lock(mutex);
    if (failure.empty())
        failure = scrubSecrets(why, secretValues(config)); // libpq's texts may quote the DSN
    failed = true;
}

void SimContext::addTruth(AnomalyLine line) {
    line.detectedAt = nowMillis();
    std::lock_guard lock(mutex);
    std::string key(toString(line.kind));
    for (const auto& id : line.callIds)
        key += "," + id;
    if (!truthKeys.insert(key).second)
        return; // already recorded (a second overlap of the same call)
    stats.injected[line.kind]++;
    truth.push_back(std::move(line));
}

void SimContext::publishEvent(const std::string& key, const std::string& json) {
    if (callerTopic.empty())
        return;
    std::string err;
    if (!producer->produce(callerTopic, key, json, err))
        fail("producing a caller event: " + err);
    callerEvents++;
}

void SimContext::submit(Request r) {
    const auto i = serverPick.fetch_add(1) % servers.size();
    servers[i]->submit(std::move(r));
}

void SimContext::deliver(int callerIndex, CallerMessage m) {
    callers[static_cast<std::size_t>(callerIndex)]->post(std::move(m));
}

} // namespace callscope::sim
