#pragma once
// The server's idempotency record and attempt log (SPEC §1.1, §1.2) through
// the config's mapping, in read-only sessions with a statement timeout.
#include "connectors/config.h"
#include "connectors/source.h"

#include <memory>
#include <vector>

namespace callscope {

class PostgresSource : public Source {
public:
    explicit PostgresSource(const PostgresConfig& config);
    ~PostgresSource() override;

    std::string name() const override { return "postgres"; }
    void loadWindow(EpochMillis since, EpochMillis until, ObservationSink& sink,
                    const std::atomic<bool>& cancel) override;
    void follow(ObservationSink& sink, const std::atomic<bool>& stop) override;

    // Point reads by primary key / index, for callIds referenced elsewhere
    // and for a cold drill-down (SPEC §4.3). Each runs on a connection of its
    // own (callable from any thread while following); `cancel` turning true
    // cancels the query on the server, which then throws SourceError.
    ObservationBatch fetchCalls(const std::vector<std::string>& callIds,
                                const std::atomic<bool>* cancel = nullptr);

    // Records (and their attempts) with this request digest created within
    // `window` of `around`: the siblings of a key rotation.
    ObservationBatch fetchByDigest(const std::string& digest, EpochMillis around, Millis window,
                                   const std::atomic<bool>* cancel = nullptr);

    // The result snapshot of one record ("" when none), for reports.
    std::string resultSnapshot(const std::string& callId,
                               const std::atomic<bool>* cancel = nullptr);

    // Connects and checks the mapping; throws SourceError.
    void connect();

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace callscope
