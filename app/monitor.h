#pragma once
// Wires the sources to the model: source threads hand batches to a queue;
// the owning thread (CLI main loop or the GUI's model thread) applies them to
// the store once per pump and runs the detections.
#include "connectors/config.h"
#include "connectors/effect_probe.h"
#include "connectors/kafka_source.h"
#include "connectors/postgres_source.h"
#include "models/detection_engine.h"
#include "models/retention.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <thread>
#include <vector>

namespace callscope {

struct MonitorOptions {
    bool kafkaFromBeginning = false;        // the demo's mock cluster
    std::int64_t retentionEveryMs = 60'000; // how often live modes apply retention
};

struct RejectStats {
    std::map<std::string, std::int64_t> byReason;
    std::deque<Rejection> samples; // the latest few
    std::int64_t total() const {
        std::int64_t n = 0;
        for (const auto& [_, c] : byReason)
            n += c;
        return n;
    }
};

// Messages lost before they were read (retention, a deleted topic), by partition.
// Calls that left memory: all of them, and those the memory budget pushed out.
struct EvictionStats {
    std::int64_t total = 0;
    std::int64_t overBudget = 0;
    std::int64_t anomalies = 0; // anomalies forgotten over the budget
    std::int64_t released = 0;  // final while a window loaded (a streaming scan)
    std::int64_t releasedWithRecord = 0;
    std::size_t storeBytes = 0;   // calls and anomalies, after the last eviction
    std::size_t anomalyBytes = 0; // the anomalies' part of it
};

struct GapStats {
    std::map<std::string, std::int64_t> lostByPartition;
    std::int64_t lost() const {
        std::int64_t n = 0;
        for (const auto& [_, c] : lostByPartition)
            n += c;
        return n;
    }
};

// The business-effect probe's work ([probe]).
struct ProbeStats {
    std::int64_t asked = 0, missing = 0, failed = 0;
    std::int64_t skipped = 0; // live: not queued, the queue was full (max_per_second too low)
    std::string lastError;
};

// What the config reads, for the detections (SPEC §3 "needs").
DetectionSources sourcesOf(const Config& config);

class Monitor : public ObservationSink {
public:
    Monitor(const Config& config, MonitorOptions options = {});
    ~Monitor() override;

    // Connects to PostgreSQL and checks the mapping; throws SourceError.
    void connect();
    // Reads [since, until) from both sources in parallel, fetches the records
    // of callIds seen only in messages, and judges everything (scan).
    void loadWindow(EpochMillis since, EpochMillis until, const std::atomic<bool>& cancel);
    // Live modes (watch, the dashboard): each source loads the window since
    // `since` on its own thread, retrying while it is down, then follows. The
    // window is judged once every source has loaded or is down, so one
    // source's outage neither hides the other's data nor holds the detections
    // back; a source that comes back later loads its part of the window then.
    // A config error ends it: pump throws.
    void startLive(EpochMillis since);
    // The window has been judged (startLive): pump reports live changes since.
    bool windowJudged() const { return m_windowJudged; }
    // Each configured source as the surfaces show it (model thread).
    std::vector<SourceHealth> sourceStates(EpochMillis now);
    void stop();
    // Applies queued batches, runs the detections, returns what changed.
    std::vector<AnomalyChange> pump(EpochMillis now);
    // What changed since the last pump (e.g. after loadWindow).
    std::vector<AnomalyChange> takeChanges() { return m_engine.takeChanges(); }
    // Evicts healthy finished calls past retention (SPEC §2), the oldest over
    // max_calls, and over the memory budget ([store] max_bytes) tier by tier,
    // then the oldest anomalies with their calls; forgets anomalies resolved
    // longer ago than retention or `keepResolved` (the dashboard's window).
    // Returns how many calls left memory.
    std::size_t applyRetention(EpochMillis now, Millis keepResolved = Millis{0});

    // The call, loaded cold by key and from one partition per topic when it is
    // not in memory (SPEC §4.3); npos when nothing is known of it.
    std::uint32_t ensureCall(const std::string& callId, const std::atomic<bool>& cancel,
                             ColdFetchStats* stats = nullptr);
    // The frozen calls of this callId or bizNo back in the store (a
    // drill-down's search); the callId's call, or npos.
    std::uint32_t thawNamed(const std::string& callIdOrBizNo) {
        return m_store.thawNamed(callIdOrBizNo);
    }
    // Told of the calls packed live as they pack and leave (model thread).
    void observeFrozen(
        std::function<void(const CallState&, std::span<const CallEvent>, int sign)> observer) {
        m_store.observeFrozen(std::move(observer));
    }
    std::string resultSnapshot(const std::string& callId,
                               const std::atomic<bool>* cancel = nullptr);

    const CallStore& store() const { return m_store; }
    const DetectionEngine& engine() const { return m_engine; }
    // Placeholder digests/bizNos found since the last call (data-quality warnings).
    std::vector<std::string> takeNewPlaceholders() { return m_engine.takeNewPlaceholders(); }
    const RejectStats& rejects() const { return m_rejects; }
    const GapStats& gaps() const { return m_gaps; }
    const EvictionStats& evictions() const { return m_evictions; }
    ProbeStats probeStats() const;
    // Told of each call before it leaves memory while a window loads (the
    // advisor measures every call, not only those still held at the end).
    void setReleaseObserver(std::function<void(std::uint32_t)> f) {
        m_releaseObserver = std::move(f);
    }
    bool probes() const { return m_probe != nullptr; }
    // Observations waiting for the model thread. A source delivering while
    // more than kMaxQueued wait (while a window loads, as many as the store
    // holds calls) is held until there is room (backpressure: the queue no
    // longer grows while the model thread is busy).
    std::size_t queued();
    static constexpr std::size_t kMaxQueued = 50'000;
    // The bytes those hold packed: a source also waits while they are a
    // quarter of the memory budget (max_bytes; 4 MiB at least) or more.
    std::size_t queuedBytes();
    std::vector<SourceHealth> healthChanges(); // since the last call
    const Config& config() const { return m_config; }

    // ObservationSink: called from source threads.
    void deliver(ObservationBatch&& batch) override;
    void health(const SourceHealth& health) override;
    void receiptCoverage(EpochMillis from, EpochMillis to) override;
    void recordCoverage(EpochMillis to) override;
    void loadProgress(const std::string& source, int percent) override;
    void readTo(const std::string& source, EpochMillis to) override;
    void sliceLength(const std::string& source, Millis length) override;
    void loadedUpTo(const std::string& source, EpochMillis t,
                    const std::atomic<bool>& cancel) override;

private:
    void applyQueued(EpochMillis now, bool judge);
    void sourceFailed(const std::string& source, const SourceError& e);
    // Reads the records of callIds seen only in messages (their record lies
    // before the window), so they are not taken for orphans.
    void fetchMissingRecords(const std::atomic<bool>& cancel);
    // loadWindow: calls whose verdict is final, all their data read up to
    // readTo (the slower source's progress), leave memory (releaseFinal).
    void releaseWhileLoading(EpochMillis readTo, const RetentionPolicy& policy, Millis grace,
                             const std::atomic<bool>& cancel);
    RetentionPolicy retentionPolicy() const;
    // How long after its last event a finished call may still change (an
    // orphan's receipt, a caller's alert, a stuck record).
    Millis finalGrace() const;
    // Live: the calls whose verdict is final, all their data read by every
    // source, leave the store packed (frozen) until retention (or
    // key_rotation_window, the longer) has passed them; a later event of
    // theirs, a key-rotation sibling or a drill-down brings them back.
    // Returns how many left memory for good.
    std::size_t freezeFinal(EpochMillis now, const RetentionPolicy& policy);
    // startLive: judges the window once every source has loaded or is down.
    void judgeWindowWhenReady(EpochMillis now);
    // The business-effect probe: SUCCESS records (sampled by callId) get a
    // probe due `delay` after their update (model thread; nullptr: every call).
    void scheduleProbes(const std::vector<std::uint32_t>* calls);
    struct ProbeTask {
        EpochMillis due;
        std::string callId, key;
        int tries = 0; // failed asks before this one (live: asked again with backoff)
        bool operator>(const ProbeTask& o) const { return due > o.due; }
    };
    // Asks one (rate-limited to max_per_second) and delivers the answer; live,
    // a failure is queued again with backoff.
    void runProbe(ProbeTask task, bool live);
    void probeThread();
    // Loading a window: asks every probe due now, and applies the answers.
    void askDueProbes(const std::atomic<bool>& cancel);
    // A drill-down or inspect of a SUCCESS past its delay: asked now.
    void probeNow(std::uint32_t call);
    // What the probe asks of a SUCCESS record not yet asked ("" when nothing:
    // not SUCCESS, asked already, or no bizNo yet), and when it is due.
    std::string probeKey(std::uint32_t call, EpochMillis& due) const;

    // One source in live mode, as its thread reports it (under m_mutex) and
    // the model thread shows it.
    struct Track {
        bool configured = false;
        bool loaded = false, loadedSeen = false; // the window is read; the model thread knows
        bool everDown = false;                   // failed at least once while loading
        int percent = -1;
        SourceHealth last;     // the last report (connected, error, note)
        std::string lastError; // kept after recovery, with when
        EpochMillis lastErrorAt = kNoTime;
        EpochMillis loadedAt = kNoTime; // quiet counts from here or the last data
        SourceState shown = SourceState::Connecting;
        EpochMillis shownSince = kNoTime;
        EpochMillis newestDataSeenAt = kNoTime; // something new was last read (model thread)
        Millis quietAfter{0};
    };
    Track& track(const std::string& source) { return source == "kafka" ? m_kafkaTrack : m_pgTrack; }
    void liveThread(const std::string& source, EpochMillis since);
    Config m_config;
    MonitorOptions m_options;
    PostgresSource m_postgres;
    KafkaSource m_kafka;
    CallStore m_store;
    DetectionEngine m_engine;
    RejectStats m_rejects;
    GapStats m_gaps;
    EvictionStats m_evictions;

    std::mutex m_mutex;                   // guards the queue, health and coverage below
    std::deque<PackedBatch> m_queue;      // packed by the sources as they deliver (see pack)
    std::size_t m_queueRoom = kMaxQueued; // more while a window loads (see loadWindow)
    std::size_t m_queued = 0;             // observations and rejections in m_queue
    std::size_t m_queuedBytes = 0;        // the packed batches' buffers in m_queue
    bool m_droppingDeliveries = false;    // a failed window load stops its readers
    std::condition_variable m_queueSpace;
    std::condition_variable m_queueFilled; // a batch came (a window load's model loop waits)
    // Packed batches applied, their buffers for the sources to pack into
    // again, up to kMaxSpareBytes in all (each of a source's batch's size, at
    // most kMaxSpareBuffer: a larger one is freed, a small batch packed into it
    // would count its whole capacity against the queue's room):
    // the queue fills and drains again and again while a window loads, and
    // buffers freed and allocated anew page-faulted in each time (a tenth of
    // a reader's time at 5M calls). Beyond that they would only hold memory.
    std::vector<PackedBatch> m_spare;
    std::size_t m_spareBytes = 0;
    static constexpr std::size_t kMaxSpareBytes = std::size_t{16} << 20;
    static constexpr std::size_t kMaxSpareBuffer = std::size_t{4} << 20;
    // What the model thread unpacks each queued batch into and applies: its
    // observations are filled again and again, their texts allocating only
    // when longer than before. Kept up to a few sources' batches' worth.
    ObservationBatch m_unpacked;
    // Batches read ahead, waiting for Kafka to read as far (model thread;
    // see applyQueued).
    std::deque<PackedBatch> m_held;
    std::size_t m_heldObservations = 0; // in m_held
    std::size_t m_heldBytes = 0;        // their buffers
    EpochMillis m_heldFrom = INT64_MAX; // the earliest readFrom in m_held
    EpochMillis m_kafkaAt =
        kNoTime; // how far Kafka's batches applied were read (in all partitions)
    static constexpr std::size_t kMaxUnpackedKept = 40'000;
    // The thread that applies batches (set by the first applyQueued): it never
    // waits for queue space, every other thread (the sources) does.
    std::atomic<std::thread::id> m_modelThread{};
    std::vector<SourceHealth> m_health;
    EpochMillis m_coverageFrom = kNoTime, m_coverageTo = kNoTime, m_recordsReadTo = kNoTime;
    EpochMillis m_kafkaReadTo = kNoTime; // every topic read (receipt ones or not)
    std::string m_fatal;                 // a config error found by a following source
    bool m_fatalIsConfig = false;

    Track m_pgTrack, m_kafkaTrack;

    // Sources loading a window together move through time together: each says
    // how far it has read (loadedUpTo) and waits while it is more than `lead`
    // ahead of another that is still loading (under m_mutex).
    struct Pace {
        bool loading = false;
        EpochMillis upTo = kNoTime;
    };
    Pace m_pgPace, m_kafkaPace;
    Millis m_paceLead{0};
    static constexpr std::int64_t kMinPaceLead = 2 * 60'000;
    std::size_t m_nextReleaseLook = 0; // releaseWhileLoading looks again at this store size
    std::condition_variable m_paceMoved;
    void startPacing(EpochMillis since, EpochMillis until);
    void stopPacing(const std::string& source);
    // Every source has read up to here while loading (kNoTime: not known yet).
    // How far both sources loading have read (INT64_MAX: not loading),
    // taken before the queue is applied; then the line up to which the
    // store holds all they read (kNoTime: none yet).
    struct PacedParts {
        EpochMillis pg = INT64_MAX, kafka = INT64_MAX;
    };
    PacedParts pacedParts();
    EpochMillis pacedReadTo(const PacedParts& before) const;
    bool m_live = false, m_windowJudged = false;

    std::unique_ptr<EffectProbe> m_probe; // only when [probe] sql is set
    mutable std::mutex m_probeMutex;      // guards the tasks and stats
    std::condition_variable m_probeWake;
    std::priority_queue<ProbeTask, std::vector<ProbeTask>, std::greater<>> m_probeTasks;
    ProbeStats m_probeStats;
    std::set<std::string> m_probeAnswered; // asked by probeNow while queued: skipped when popped
    std::mutex m_probeRun; // one probe at a time: guards m_probe's session and m_lastProbe
    std::chrono::steady_clock::time_point m_lastProbe{};

    std::function<void(std::uint32_t)> m_releaseObserver;
    std::atomic<bool> m_stop{false};
    std::vector<std::thread> m_threads;
};

} // namespace callscope
