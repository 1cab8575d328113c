#pragma once
// Receipt and caller-event topics (SPEC §1.3, §1.4): topics by name or regex,
// partitions assigned by hand (no group, no commits), start at a timestamp,
// decoding through the config's mapping; malformed messages are counted per
// reason and skipped.
#include "connectors/config.h"
#include "connectors/source.h"

#include <memory>

namespace callscope {

struct KafkaSourceOptions {
    // Read fresh topics from their beginning instead of seeking by timestamp
    // (librdkafka's mock cluster answers no timestamp lookups).
    bool fromBeginning = false;
};

struct ColdFetchStats {
    int topics = 0;
    std::int64_t messagesScanned = 0; // in the one partition per topic
    std::int64_t messagesMatched = 0;
};

class KafkaSource : public Source {
public:
    KafkaSource(const KafkaConfig& config, KafkaSourceOptions options = {});
    ~KafkaSource() override;

    std::string name() const override { return "kafka"; }
    void loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                    const std::atomic<bool>& cancel) override;
    void follow(ObservationSink& sink, const std::atomic<bool>& stop) override;

    // The receipts and caller events of one callId between two times, read from
    // only the partition its key hashes to in each topic (SPEC §4.3).
    ObservationBatch fetchCall(const std::string& callId, EpochMillis from, EpochMillis to,
                               const std::atomic<bool>& cancel, ColdFetchStats* stats = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
