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

// What `callscope check` reports of the brokers: the topics each spec
// matches, their size and timestamp type, and a decoded sample.
struct KafkaCheck {
    struct Topic {
        std::string name;
        bool receipts = true; // else caller events
        int partitions = 0;
        std::int64_t messages = 0; // end minus earliest offset over its partitions
        std::string timestampType; // "CreateTime", "LogAppendTime", "" (none sampled), "mixed"
    };
    std::vector<Topic> topics;
    bool receiptsMissing = false, callersMissing = false; // a spec matches nothing
    std::int64_t sampled = 0;                             // messages read for the sample
    ObservationBatch sample; // the newest messages of each topic, decoded
    // Sampled keys checked against kafka.partitioner, and those found in
    // another partition than it names (the cold drill-down would miss them).
    std::int64_t keysChecked = 0, keysElsewhere = 0;
    std::vector<std::string> problems; // partitions that could not be read, and why
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

    // Connects the cold reader and lists the topics for the fetchCall that
    // follows (on another thread, while the record is looked up); failures
    // are left for fetchCall to report.
    void prepareColdRead(const std::atomic<bool>& cancel);

    // Lists the matching topics and decodes the newest `samplePerTopic`
    // messages of each (spread over its partitions).
    KafkaCheck check(std::size_t samplePerTopic, const std::atomic<bool>& cancel);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
