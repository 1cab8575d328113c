#include "app/monitor.h"

#include "connectors/secrets.h"
#include "models/backoff.h"
#include "models/interner.h"
#include "models/retention.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <future>
#include <set>
#include <unordered_set>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace callscope {
namespace {

DetectThresholds thresholdsOf(const Config& c) {
    return {c.detect.stuckAfter, c.detect.receiptGrace, c.detect.callerAlertAfter,
            c.detect.keyRotationWindow};
}

constexpr std::size_t kRejectSamples = 20;
constexpr std::int64_t kColdMarginMs = 5 * 60'000;
// The first read of a finished call's messages reaches this far around its
// life (clock skew between the caller, the server and the brokers).
constexpr std::int64_t kColdNearMs = 60'000;

} // namespace

DetectionSources sourcesOf(const Config& c) {
    return {c.readsAttempts(), c.readsReceipts(), c.readsCallerEvents(), c.readsPostgres(),
            c.readsPostgres() && c.probe.enabled()};
}

Monitor::Monitor(const Config& config, MonitorOptions options)
    : m_config(config), m_options(options), m_postgres(config.postgres),
      m_kafka(config.kafka, KafkaSourceOptions{options.kafkaFromBeginning}),
      m_engine(thresholdsOf(config), sourcesOf(config)) {
    if (config.readsPostgres() && config.probe.enabled())
        m_probe = std::make_unique<EffectProbe>(config.postgres, config.probe);
}

Monitor::~Monitor() {
    stop();
}

void Monitor::connect() {
    if (m_config.readsPostgres())
        m_postgres.connect();
}

void Monitor::deliver(ObservationBatch&& batch) {
    const std::size_t n = batch.size() + batch.rejected.size();
    PackedBatch packed; // (declared before the lock: one dropped is freed after it)
    {
        std::lock_guard lock(m_mutex);
        if (!m_spare.empty()) {
            packed = std::move(m_spare.back());
            m_spare.pop_back();
            m_spareBytes -= packed.capacity;
        }
    }
    // Packed on the source's thread; the batch, emptied, is the source's to
    // fill again (its observations keep their buffers).
    pack(batch, packed);
    const std::size_t bytes = packed.capacity;
    // However large its messages (a megabyte each), the queue holds at most
    // a quarter of the memory budget, and a batch more.
    const auto bytesRoom = static_cast<std::size_t>(
        std::max<std::int64_t>(m_config.retention.maxBytes / 4, std::int64_t{4} << 20));
    std::unique_lock lock(m_mutex);
    const std::thread::id model = m_modelThread.load();
    if (model != std::thread::id{} && model != std::this_thread::get_id())
        m_queueSpace.wait(lock, [&] {
            return (m_queued < m_queueRoom && m_queuedBytes < bytesRoom) || m_stop ||
                   m_droppingDeliveries;
        });
    if (m_droppingDeliveries)
        return; // a failed window load is stopping its readers: what they still deliver goes
    m_queued += n;
    m_queuedBytes += bytes;
    m_queue.push_back(std::move(packed));
    m_queueFilled.notify_one();
}

std::size_t Monitor::queuedBytes() {
    std::lock_guard lock(m_mutex);
    return m_queuedBytes;
}

std::size_t Monitor::queued() {
    std::lock_guard lock(m_mutex);
    return m_queued;
}

void Monitor::health(const SourceHealth& h) {
    std::lock_guard lock(m_mutex);
    m_health.push_back(h);
    Track& t = track(h.source);
    if (h.note.empty()) { // a state change; a note leaves the state as it was
        const std::string note = t.last.note;
        t.last = h;
        t.last.note = note;
    } else {
        t.last.note = h.note;
    }
    if (!h.connected && h.note.empty()) {
        t.lastError = h.lastError;
        t.lastErrorAt = nowMillis();
        if (!t.loaded)
            t.everDown = true;
    }
}

void Monitor::readTo(const std::string& source, EpochMillis to) {
    std::lock_guard lock(m_mutex);
    if (source == "kafka")
        m_kafkaReadTo = std::max(m_kafkaReadTo, to);
}

void Monitor::loadProgress(const std::string& source, int percent) {
    std::lock_guard lock(m_mutex);
    Track& t = track(source);
    t.percent = percent;
    // Reading the window: the source answers again (its outage is over).
    if (!t.last.source.empty() && !t.last.connected && t.last.note.empty()) {
        t.last.connected = true;
        t.last.lastError.clear();
    }
}

void Monitor::startPacing(EpochMillis since, EpochMillis until) {
    std::lock_guard lock(m_mutex);
    // A lead of two of the record reader's slices (see sliceLength; until the
    // first, or when the record table is small enough to be read at once, a
    // 32nd of the window): neither source waits for the other's next slice.
    m_paceLead = Millis{std::max<std::int64_t>(kMinPaceLead, (until - since) / 32)};
    m_pgPace = {m_config.readsPostgres(), since};
    m_nextReleaseLook = 0;
    m_kafkaPace = {m_config.readsKafka(), since};
    m_kafkaAt = kNoTime; // (the model thread's: this one)
    m_held.clear();
    m_heldObservations = 0;
    m_heldBytes = 0;
    m_heldFrom = INT64_MAX;
}

void Monitor::sliceLength(const std::string& source, Millis length) {
    std::lock_guard lock(m_mutex);
    // The record reader's slices set the lead: memory holds what the sources
    // read ahead of each other, so the lead follows the data read, not the
    // window's length (a 30-day window over a busy day would hold hours).
    if (source == "postgres")
        m_paceLead = Millis{std::max<std::int64_t>(kMinPaceLead, 2 * length.count())};
}

void Monitor::stopPacing(const std::string& source) {
    std::lock_guard lock(m_mutex);
    (source == "kafka" ? m_kafkaPace : m_pgPace).loading = false;
    m_paceMoved.notify_all();
}

void Monitor::loadedUpTo(const std::string& source, EpochMillis t,
                         const std::atomic<bool>& cancel) {
    std::unique_lock lock(m_mutex);
    Pace& self = source == "kafka" ? m_kafkaPace : m_pgPace;
    const Pace& other = source == "kafka" ? m_pgPace : m_kafkaPace;
    self.upTo = std::max(self.upTo, t);
    m_paceMoved.notify_all();
    const auto ahead = [&] {
        return other.loading && self.upTo > other.upTo + m_paceLead.count() && !cancel && !m_stop;
    };
    while (ahead())
        m_paceMoved.wait_for(lock, std::chrono::milliseconds(100));
}

Monitor::PacedParts Monitor::pacedParts() {
    std::lock_guard lock(m_mutex);
    return {m_pgPace.loading ? m_pgPace.upTo : INT64_MAX,
            m_kafkaPace.loading ? m_kafkaPace.upTo : INT64_MAX};
}

EpochMillis Monitor::pacedReadTo(const PacedParts& before) const {
    // Kafka's part: as far as its batches applied tell (every batch, not only
    // its progress reports: those come every 250 ms, minutes of data apart).
    const EpochMillis kafka = before.kafka == INT64_MAX ? INT64_MAX
                              : m_kafkaAt == kNoTime    ? before.kafka
                                                        : std::max(before.kafka, m_kafkaAt);
    const EpochMillis t = std::min({before.pg, kafka, m_heldFrom});
    return t == INT64_MAX ? kNoTime : t;
}

void Monitor::receiptCoverage(EpochMillis from, EpochMillis to) {
    std::lock_guard lock(m_mutex);
    if (m_coverageFrom == kNoTime || from < m_coverageFrom)
        m_coverageFrom = from;
    m_coverageTo = std::max(m_coverageTo, to);
}

void Monitor::recordCoverage(EpochMillis to) {
    std::lock_guard lock(m_mutex);
    m_recordsReadTo = std::max(m_recordsReadTo, to);
}

std::vector<SourceHealth> Monitor::healthChanges() {
    std::lock_guard lock(m_mutex);
    std::vector<SourceHealth> out;
    out.swap(m_health);
    return out;
}

void Monitor::applyQueued(EpochMillis now, bool judge) {
    std::deque<PackedBatch> queue;
    EpochMillis from, to, records;
    bool holding = false; // batches read ahead wait for Kafka (see below)
    m_modelThread = std::this_thread::get_id();
    {
        std::lock_guard lock(m_mutex);
        queue.swap(m_queue);
        m_queued = 0;
        m_queuedBytes = 0;
        m_queueSpace.notify_all();
        from = m_coverageFrom;
        to = m_coverageTo;
        records = m_recordsReadTo;
        holding = m_kafkaPace.loading;
        m_kafkaAt = std::max(m_kafkaAt, m_kafkaPace.upTo);
    }
    // While a window loads, the sources read ahead of each other: the record
    // reader minutes of data ahead of Kafka (its slices, and the lead that
    // keeps either from waiting for the other's next), and Kafka's partitions
    // up to kPartitionLead apart (a fetch brings minutes of one partition).
    // A batch that begins later than every Kafka partition has been read
    // waits here, packed, until Kafka has read that far (each of its batches
    // tells how far its slowest partition had been read): a call's rows and
    // messages then come to the store close together, while its state is
    // still in the cache, and the store holds the calls up to where all have
    // read, not the readers' leads. Batches of one stream (the record
    // reader's; a partition's) keep their order, so one due may wait behind
    // an earlier one that is not. What waits is outside the queue's room (the
    // readers go on to their leads, never held by it) up to a quarter of the
    // memory budget, beyond which the earliest held go to the store as
    // before. The line calls are judged final by stops at the earliest
    // batch waiting (m_heldFrom, pacedReadTo), and so does the record
    // coverage told to the engine. (Applying a batch early is always right,
    // only slower: it is how every batch went before.)
    const auto due = [&](const PackedBatch& b) {
        return !holding || b.readFrom == kNoTime ||
               b.readFrom <= std::max(m_kafkaAt, b.kafkaReadTo);
    };
    std::vector<std::uint32_t> touched;
    std::vector<PackedBatch> applied; // their buffers, for the sources again
    const auto applyOne = [&](PackedBatch& packed) {
        ObservationBatch& b = m_unpacked;
        // One that took a big batch (a lookup of many calls) lets it go.
        if (b.size() > kMaxUnpackedKept)
            b = ObservationBatch{};
        unpack(packed, b);
        rejectOversized(b, static_cast<std::size_t>(m_config.retention.maxFieldBytes));
        for (Rejection& r : b.rejected) {
            m_rejects.byReason[r.reason]++;
            m_rejects.samples.push_back(std::move(r));
            if (m_rejects.samples.size() > kRejectSamples)
                m_rejects.samples.pop_front();
        }
        for (const DataGap& g : b.gaps) {
            m_gaps.lostByPartition[g.where] += g.lost();
            // A note like a health change: watch prints it, the dashboard shows it.
            health({"kafka", true, "", now, 0,
                    std::to_string(g.lost()) + " messages of " + g.where + " (offsets " +
                        std::to_string(g.fromOffset) + "-" + std::to_string(g.toOffset - 1) +
                        ") were deleted by retention before they were read"});
        }
        const StoreCounters before = m_store.counters();
        if (judge) {
            auto t = m_store.apply(b);
            touched.insert(touched.end(), t.begin(), t.end());
        } else {
            m_store.applyOnly(b); // nothing is judged from these now: no list to sort
        }
        // When each source last brought something new (quiet): what the store
        // took as a change, not a row the record feed read again in its overlap.
        const StoreCounters& after = m_store.counters();
        if (after.records + after.attempts > before.records + before.attempts)
            m_pgTrack.newestDataSeenAt = now;
        if (after.receipts + after.callerEvents > before.receipts + before.callerEvents)
            m_kafkaTrack.newestDataSeenAt = now;
        if (packed.kafkaReadTo != kNoTime)
            m_kafkaAt = std::max(m_kafkaAt, packed.kafkaReadTo);
        applied.push_back(std::move(packed));
    };
    // A held batch out of m_held (and its counts), then applied.
    const auto applyHeld = [&](std::deque<PackedBatch>::iterator it) {
        PackedBatch b = std::move(*it);
        const auto next = m_held.erase(it);
        m_heldObservations -= b.observations();
        m_heldBytes -= b.capacity;
        applyOne(b);
        return next;
    };
    // The held batches now due, in order, a stream's after its earlier ones.
    std::vector<std::uint32_t> blocked;
    const auto applyDue = [&] {
        for (bool again = true; again && !m_held.empty();) {
            again = false;
            blocked.clear();
            for (auto it = m_held.begin(); it != m_held.end();) {
                const bool waits =
                    std::find(blocked.begin(), blocked.end(), it->stream) != blocked.end();
                if (waits || !due(*it)) {
                    if (!waits)
                        blocked.push_back(it->stream);
                    ++it;
                    continue;
                }
                it = applyHeld(it);
                again = true; // (Kafka read further: one before may be due now)
            }
        }
    };
    const auto streamHeld = [&](std::uint32_t stream) {
        return std::any_of(m_held.begin(), m_held.end(),
                           [&](const PackedBatch& h) { return h.stream == stream; });
    };
    if (from != kNoTime)
        m_engine.setReceiptCoverage(from, to);
    applyDue();
    for (PackedBatch& b : queue) {
        if (b.readFrom != kNoTime && (!due(b) || streamHeld(b.stream))) {
            m_heldObservations += b.observations();
            m_heldBytes += b.capacity;
            m_held.push_back(std::move(b));
            continue;
        }
        const bool moves = b.kafkaReadTo != kNoTime && b.kafkaReadTo > m_kafkaAt;
        applyOne(b);
        if (moves && !m_held.empty())
            applyDue();
    }
    const auto heldRoom = static_cast<std::size_t>(
        std::max<std::int64_t>(m_config.retention.maxBytes / 4, std::int64_t{4} << 20));
    while (m_heldBytes > heldRoom && !m_held.empty()) // the earliest, in order
        applyHeld(m_held.begin());
    // What waits begins at m_heldFrom, the line calls are judged final by
    // stops there (see pacedReadTo: a partition's timestamps out of order can
    // keep a batch due behind one that is not); records are read up to the
    // first record batch waiting.
    m_heldFrom = INT64_MAX;
    for (const PackedBatch& b : m_held) {
        m_heldFrom = std::min(m_heldFrom, b.readFrom);
        if (b.stream == 0 && records != kNoTime)
            records = std::min(records, b.readFrom);
    }
    if (records != kNoTime)
        m_engine.setRecordCoverage(records);
    {
        std::lock_guard lock(m_mutex);
        for (PackedBatch& b : applied)
            if (b.capacity <= kMaxSpareBuffer && m_spareBytes + b.capacity <= kMaxSpareBytes) {
                m_spareBytes += b.capacity;
                m_spare.push_back(std::move(b));
            }
    }
    if (!judge)
        return;
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    m_engine.evaluate(m_store, touched, now);
    scheduleProbes(&touched);
}

// --- The business-effect probe ([probe], effect_missing) -------------------

void Monitor::scheduleProbes(const std::vector<std::uint32_t>* calls) {
    if (!m_probe)
        return;
    const ProbeConfig& p = m_config.probe;
    // Live, the queue holds at most what max_per_second asks in max(delay,
    // 1 min): beyond that a record is skipped and counted, never queued
    // without bound. A window load drains the queue as it releases calls.
    const std::size_t cap =
        m_live ? static_cast<std::size_t>(p.maxPerSecond *
                                          std::max<std::int64_t>(60, p.delay.count() / 1000))
               : SIZE_MAX;
    std::lock_guard lock(m_probeMutex);
    const auto consider = [&](std::uint32_t i) {
        if (m_store.call(i).flags & (ProbeScheduled | ProbeSkipped))
            return;
        EpochMillis due = kNoTime;
        std::string key = probeKey(i, due);
        if (key.empty())
            return; // no bizNo yet: asked when a caller event brings one
        std::string callId = m_store.callId(i);
        // Sampled by callId: the same calls each run, whichever mode asks.
        if (p.rate < 1.0 && double(hashText(callId)) / 18446744073709551616.0 >= p.rate)
            return;
        if (m_probeTasks.size() >= cap) {
            m_store.markProbeSkipped(i);
            m_probeStats.skipped++;
            return;
        }
        m_store.markProbeScheduled(i);
        m_probeTasks.push({due, std::move(callId), std::move(key), 0});
    };
    if (calls) {
        for (const std::uint32_t i : *calls)
            consider(i);
    } else {
        for (std::uint32_t i = 0; i < m_store.size(); ++i)
            consider(i);
    }
    m_probeWake.notify_all();
}

void Monitor::runProbe(ProbeTask task, bool live) {
    // One probe at a time (one session), at most max_per_second: the
    // deployment's database is not ours to load.
    std::unique_lock one(m_probeRun);
    const auto gap = std::chrono::microseconds(1'000'000 / m_config.probe.maxPerSecond);
    {
        std::unique_lock lock(m_probeMutex);
        m_probeWake.wait_until(lock, m_lastProbe + gap, [&] { return m_stop.load(); });
        if (m_stop)
            return;
    }
    m_lastProbe = std::chrono::steady_clock::now();
    std::string error;
    const std::optional<bool> found = m_probe->exists(task.key, error);
    one.unlock();
    bool note = false, retry = false;
    {
        std::lock_guard lock(m_probeMutex);
        m_probeStats.asked++;
        m_probeStats.missing += found && !*found;
        if (!found) {
            note = m_probeStats.failed++ % 100 == 0; // the first failure, then every 100th
            m_probeStats.lastError = error;
            // Live, a failure (an outage) is asked again later, 5 times at most.
            if (live && task.tries < 5) {
                retry = true;
                task.due = nowMillis() + (30'000LL << task.tries);
                task.tries++;
                m_probeTasks.push(task);
            }
        }
    }
    if (note)
        health({"postgres", true, "", nowMillis(), 0, "business-effect probe failed: " + error});
    if (retry)
        return;
    ObservationBatch b;
    b.probes.push_back({task.callId, found.value_or(false), !found});
    deliver(std::move(b));
}

void Monitor::probeThread() {
    std::unique_lock lock(m_probeMutex);
    while (!m_stop) {
        const EpochMillis now = nowMillis();
        if (m_probeTasks.empty() || m_probeTasks.top().due > now) {
            const EpochMillis wait = m_probeTasks.empty()
                                         ? 500
                                         : std::min<EpochMillis>(500, m_probeTasks.top().due - now);
            m_probeWake.wait_for(lock, std::chrono::milliseconds(wait),
                                 [&] { return m_stop.load(); });
            continue;
        }
        ProbeTask task = m_probeTasks.top();
        m_probeTasks.pop();
        if (m_probeAnswered.erase(task.callId))
            continue; // asked already, for a drill-down
        lock.unlock();
        runProbe(std::move(task), true);
        lock.lock();
    }
}

void Monitor::askDueProbes(const std::atomic<bool>& cancel) {
    if (!m_probe)
        return;
    scheduleProbes(nullptr);
    std::vector<ProbeTask> due;
    {
        std::lock_guard lock(m_probeMutex);
        const EpochMillis now = nowMillis();
        while (!m_probeTasks.empty() && m_probeTasks.top().due <= now) {
            if (!m_probeAnswered.erase(m_probeTasks.top().callId))
                due.push_back(m_probeTasks.top());
            m_probeTasks.pop();
        }
    }
    for (ProbeTask& t : due) {
        if (cancel || m_stop)
            break;
        runProbe(std::move(t), false);
    }
    applyQueued(nowMillis(), false);
}

std::string Monitor::probeKey(std::uint32_t i, EpochMillis& due) const {
    const CallState& c = m_store.call(i);
    if (!c.hasRecord() || c.recordStatus() != RecordStatus::Success || (c.flags & EffectProbed))
        return {};
    const EpochMillis updated = m_store.timeOf(c, c.updated);
    due = (updated == kNoTime ? nowMillis() : updated) + m_config.probe.delay.count();
    return m_config.probe.key == "callId" ? m_store.callId(i) : m_store.bizNo(c.bizNo);
}

void Monitor::probeNow(std::uint32_t i) {
    if (!m_probe || i == CallStore::npos)
        return;
    EpochMillis due = kNoTime;
    std::string key = probeKey(i, due);
    if (key.empty() || due > nowMillis())
        return;
    const std::string callId = m_store.callId(i);
    if (m_store.call(i).flags & ProbeScheduled) {
        std::lock_guard lock(m_probeMutex);
        m_probeAnswered.insert(callId); // its queued task is skipped
    }
    m_store.markProbeScheduled(i);
    runProbe({due, callId, std::move(key), 0}, false);
    applyQueued(nowMillis(), true);
}

ProbeStats Monitor::probeStats() const {
    std::lock_guard lock(m_probeMutex);
    return m_probeStats;
}

void Monitor::loadWindow(EpochMillis since, EpochMillis until, const std::atomic<bool>& cancel) {
    std::string pgError, kafkaError;
    bool pgConfig = false, kafkaConfig = false;
    std::atomic<int> running{2};
    // A reader that fails stops the other: the load fails with its error, and
    // is not kept waiting while the other reads the rest of the window.
    std::atomic<bool> readerFailed{false};
    startPacing(since, until);
    // Final calls that may still gain a key-rotation sibling leave memory
    // packed, for the length of the load (see CallStore::freeze), however it ends.
    m_store.startFreezing();
    struct StopFreezing {
        CallStore& store;
        ~StopFreezing() { store.stopFreezing(); }
    } stopFreezing{m_store};
    // The readers stop at the caller's cancel (this thread passes it on) or
    // when this thread fails. However it leaves (out of memory while
    // applying), they are stopped and joined first: a std::thread destroyed
    // joinable ends the program.
    std::atomic<bool> stopReading{false};
    // Any failure of a reader is reported as an outage of its source, the
    // secrets of its settings scrubbed (a SourceError's are already).
    const auto failed = [this](const char* source, const std::exception* e) {
        try {
            return std::string(source) + ": " +
                   (e ? scrubSecrets(e->what(), secretValues(m_config)) : "unknown error");
        } catch (...) {
            return std::string(source) + ": failed"; // (out of memory)
        }
    };
    std::thread pg, kafka;
    struct JoinReaders {
        Monitor& monitor;
        std::atomic<bool>& stop;
        std::thread& pg;
        std::thread& kafka;
        void dropQueue() {
            std::deque<PackedBatch> dropped; // freed after the lock is released
            std::deque<PackedBatch> held = std::move(monitor.m_held); // (this thread's)
            monitor.m_held.clear();
            monitor.m_heldObservations = 0;
            monitor.m_heldBytes = 0;
            monitor.m_heldFrom = INT64_MAX;
            std::lock_guard lock(monitor.m_mutex);
            dropped.swap(monitor.m_queue);
            monitor.m_queued = 0;
            monitor.m_queuedBytes = 0;
        }
        ~JoinReaders() {
            {
                std::lock_guard lock(monitor.m_mutex);
                monitor.m_queueRoom = kMaxQueued; // (however the load ends)
            }
            if (!pg.joinable() && !kafka.joinable())
                return;
            stop = true;
            {
                // A reader waiting for queue space goes on, to see the stop;
                // what it delivers meanwhile is dropped.
                std::lock_guard lock(monitor.m_mutex);
                monitor.m_droppingDeliveries = true;
            }
            monitor.m_queueSpace.notify_all();
            if (pg.joinable())
                pg.join();
            if (kafka.joinable())
                kafka.join();
            dropQueue(); // (the aborted load's batches)
            std::lock_guard lock(monitor.m_mutex);
            monitor.m_droppingDeliveries = false;
        }
    } joinReaders{*this, stopReading, pg, kafka};
    pg = std::thread([&] {
        try {
            if (m_config.readsPostgres())
                m_postgres.loadWindow(since, until, *this, stopReading);
        } catch (const SourceError& e) {
            pgError = e.what();
            pgConfig = e.configError;
        } catch (const std::exception& e) {
            pgError = failed("PostgreSQL", &e);
        } catch (...) {
            pgError = failed("PostgreSQL", nullptr);
        }
        if (!pgError.empty())
            readerFailed = true;
        stopPacing("postgres");
        running--;
    });
    kafka = std::thread([&] {
        try {
            if (m_config.readsKafka())
                m_kafka.loadWindow(since, until, *this, stopReading);
        } catch (const SourceError& e) {
            kafkaError = e.what();
            kafkaConfig = e.configError;
        } catch (const std::exception& e) {
            kafkaError = failed("Kafka", &e);
        } catch (...) {
            kafkaError = failed("Kafka", nullptr);
        }
        if (!kafkaError.empty())
            readerFailed = true;
        stopPacing("kafka");
        running--;
    });
    // Apply batches while the sources read, so memory holds the store, not a
    // backlog; calls whose verdict is final leave as the sources move on.
    const RetentionPolicy policy = retentionPolicy();
    const Millis grace = finalGrace();
    while (running > 0) {
        if (cancel || readerFailed)
            stopReading = true;
        // The sources' progress is taken before the batches are applied: a
        // reader delivers what it has read before it reports the progress,
        // so everything up to readTo is in the store when calls are judged.
        // (Kafka's batches tell how far it had read as they are applied.)
        const PacedParts before = pacedParts();
        applyQueued(nowMillis(), false);
        const EpochMillis readTo = pacedReadTo(before);
        // Looked at as the store grows, not on a clock: a load faster than
        // any period still lets its final calls go. (Not once a reader has
        // failed: the other's progress alone does not make a call final.)
        if (!readerFailed)
            releaseWhileLoading(readTo, policy, grace, cancel);
        // Until a batch comes (a reader held by a full queue waits for this
        // thread: it does not sleep while there is work), or 20 ms.
        std::unique_lock lock(m_mutex);
        // A release holds this thread for a time that grows with the store
        // (80-100 ms at 200k calls), and the readers with it once the queue
        // is full: the queue may hold as many observations as the store holds
        // calls, so that they read on meanwhile. Memory holds them in
        // proportion to the store, not to the window, and (deliver) at most a
        // quarter of the store's budget, packed (about 150 B an observation):
        // a store that lets nothing go does not double memory. (5M calls:
        // 22-25 s -> 20.2-20.8 s, with librdkafka's prefetch halved to keep
        // the 1M scan's peak. Packed, twice the store: 19.0-19.2 s, but
        // 20 MiB more at 1M, 274-278 MiB: at the target.) The observations
        // held back (applyQueued) count with the store: they were its calls
        // before they waited outside it (without them, the room halved with
        // the store: 5M calls 20.1 -> 21.4 s).
        m_queueRoom = std::max(kMaxQueued, m_store.size() + m_heldObservations);
        m_queueFilled.wait_for(lock, std::chrono::milliseconds(20),
                               [&] { return !m_queue.empty() || running == 0; });
    }
    pg.join();
    kafka.join();
    applyQueued(nowMillis(), false);
    if (!pgError.empty())
        throw SourceError(pgError, pgConfig);
    if (!kafkaError.empty())
        throw SourceError(kafkaError, kafkaConfig);

    fetchMissingRecords(cancel);
    askDueProbes(cancel);
    m_store.thawSiblings(); // the last calls' key-rotation siblings that had left
    m_engine.setSettled(true);
    m_engine.evaluateAll(m_store, nowMillis());
    m_engine.setSettled(false);
}

RetentionPolicy Monitor::retentionPolicy() const {
    return {m_config.retention.finishedCalls, m_config.retention.maxCalls,
            m_config.retention.maxBytes, m_config.readsPostgres(), m_config.readsReceipts()};
}

Millis Monitor::finalGrace() const {
    return Millis{
        std::max({m_config.detect.receiptGrace.count(), m_config.detect.callerAlertAfter.count(),
                  m_config.detect.stuckAfter.count()})};
}

std::size_t Monitor::freezeFinal(EpochMillis now, const RetentionPolicy& policy) {
    EpochMillis readTo = kNoTime;
    {
        std::lock_guard lock(m_mutex);
        const bool pg = m_config.readsPostgres(), kafka = m_config.readsKafka();
        if ((pg && m_recordsReadTo == kNoTime) || (kafka && m_kafkaReadTo == kNoTime))
            return 0; // (a source has read nothing yet: nothing is final)
        readTo = pg && kafka ? std::min(m_recordsReadTo, m_kafkaReadTo)
                 : pg        ? m_recordsReadTo
                             : m_kafkaReadTo;
    }
    const std::size_t before = m_store.size() + m_store.frozenCount();
    const Millis kept{
        std::max(policy.finishedCalls.count(), m_config.detect.keyRotationWindow.count())};
    releaseFinal(m_store, m_engine, policy, {std::min(readTo, now), finalGrace(), kept, true}, now,
                 0);
    return before - (m_store.size() + m_store.frozenCount());
}

void Monitor::releaseWhileLoading(EpochMillis readTo, const RetentionPolicy& policy, Millis grace,
                                  const std::atomic<bool>& cancel) {
    if (readTo == kNoTime)
        return;
    // Looking for final calls costs a pass over the store: it is made when
    // the store has grown by an eighth since the last look (a third since
    // calls last left), so the peak stays near 4/3 of what must be held.
    const auto batch = static_cast<std::size_t>(m_config.retention.releaseBatch);
    if (m_store.size() < std::max(batch, m_nextReleaseLook))
        return;
    // (The sources report their coverage as they go: the engine judges
    // receipts and records with what has been read.)
    // The probes due now are asked first: a call waiting for one stays.
    askDueProbes(cancel);
    const ReleaseResult r =
        releaseFinal(m_store, m_engine, policy, {readTo, grace, m_config.detect.keyRotationWindow},
                     nowMillis(), std::max(batch, m_store.size() / 4), m_releaseObserver);
    m_nextReleaseLook = r.left > 0 ? m_store.size() * 4 / 3 : m_store.size() * 9 / 8;
    m_evictions.released += static_cast<std::int64_t>(r.left);
    m_evictions.releasedWithRecord += static_cast<std::int64_t>(r.withRecord);
}

void Monitor::fetchMissingRecords(const std::atomic<bool>& cancel) {
    std::vector<std::string> missing;
    for (std::uint32_t i = 0; i < m_store.size() && m_config.readsPostgres(); ++i)
        if (!m_store.call(i).hasRecord())
            missing.push_back(m_store.callId(i));
    if (missing.empty() || cancel)
        return;
    deliver(m_postgres.fetchCalls(missing, &cancel)); // (one batch of them all: gone once packed)
    applyQueued(nowMillis(), false);
}

void Monitor::sourceFailed(const std::string& source, const SourceError& e) {
    std::lock_guard lock(m_mutex);
    m_fatal = source + ": " + e.what();
    m_fatalIsConfig = e.configError;
}

void Monitor::liveThread(const std::string& source, EpochMillis since) {
    const bool pg = source == "postgres";
    for (Backoff retry; !m_stop;) {
        try {
            if (pg) {
                m_postgres.connect();
                m_postgres.loadWindow(since, nowMillis(), *this, m_stop);
            } else {
                m_kafka.loadWindow(since, nowMillis(), *this, m_stop);
            }
            break;
        } catch (const SourceError& e) {
            if (e.configError) {
                sourceFailed(source, e);
                return;
            }
            health({source, false, e.what(), kNoTime, 0, {}});
            const std::int64_t wait = retry.next();
            for (std::int64_t waited = 0; waited < wait && !m_stop; waited += 100)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    if (m_stop)
        return;
    {
        std::lock_guard lock(m_mutex);
        track(source).loaded = true;
    }
    try {
        if (pg)
            m_postgres.follow(*this, m_stop);
        else
            m_kafka.follow(*this, m_stop);
    } catch (const SourceError& e) {
        sourceFailed(source, e);
    }
}

void Monitor::startLive(EpochMillis since) {
    m_stop = false;
    m_live = true;
    m_store.startFreezing(true); // live: see freezeFinal
    // The record feed reads clock_skew again every 30 s, and an overlap each
    // poll (PostgresSource): rows of calls gone are known that far back.
    m_store.setRereadSpan(
        (m_config.postgres.clockSkew + Millis{10'000} + 2 * m_config.postgres.pollInterval)
            .count());
    const EpochMillis now = nowMillis();
    m_pgTrack.configured = m_config.readsPostgres();
    m_kafkaTrack.configured = m_config.readsKafka();
    m_pgTrack.quietAfter = m_config.postgres.quietAfter;
    m_kafkaTrack.quietAfter = m_config.kafka.quietAfter;
    for (Track* t : {&m_pgTrack, &m_kafkaTrack})
        t->shownSince = now;
    for (const char* source : {"postgres", "kafka"})
        if (track(source).configured)
            m_threads.emplace_back(
                [this, s = std::string(source), since] { liveThread(s, since); });
    if (m_probe)
        m_threads.emplace_back([this] { probeThread(); });
}

void Monitor::judgeWindowWhenReady(EpochMillis now) {
    bool ready = true, allLoaded = true, lateLoad = false, pgLoaded = false;
    {
        std::lock_guard lock(m_mutex);
        for (Track* t : {&m_pgTrack, &m_kafkaTrack}) {
            if (!t->configured)
                continue;
            ready = ready && (t->loaded || t->everDown);
            allLoaded = allLoaded && t->loaded;
            if (t->loaded && !t->loadedSeen) {
                t->loadedSeen = true;
                t->loadedAt = now;
                lateLoad = m_windowJudged;
            }
        }
        pgLoaded = m_pgTrack.loaded;
    }
    if (m_windowJudged && !lateLoad)
        return;
    if (!ready)
        return;
    // What the sources delivered before they said they had loaded.
    applyQueued(now, m_windowJudged);
    // Messages name callIds whose record lies before the window: their
    // records are read by key (once PostgreSQL has loaded).
    if (pgLoaded) {
        try {
            fetchMissingRecords(m_stop);
        } catch (const SourceError&) {
            // PostgreSQL went down again: the follow thread reports it; the
            // records come when it is back, and an orphan waits receipt_grace.
        }
    }
    m_engine.setSettled(allLoaded && !m_windowJudged);
    m_engine.evaluateAll(m_store, now);
    m_engine.setSettled(false);
    m_windowJudged = true;
    scheduleProbes(nullptr);
}

std::vector<SourceHealth> Monitor::sourceStates(EpochMillis now) {
    std::vector<SourceHealth> out;
    std::lock_guard lock(m_mutex);
    const EpochMillis readTo[2] = {m_recordsReadTo, m_kafkaReadTo};
    int k = 0;
    for (Track* t : {&m_pgTrack, &m_kafkaTrack}) {
        const EpochMillis covered = readTo[k++];
        const bool pg = t == &m_pgTrack;
        SourceHealth h = t->last;
        h.source = pg ? "postgres" : "kafka";
        h.configured = t->configured;
        SourceState state;
        if (!t->configured) {
            state = SourceState::NotRead;
        } else if (!t->last.source.empty() && !t->last.connected) {
            state = SourceState::Down;
        } else if (!t->loaded) {
            state = t->percent >= 0 ? SourceState::Loading : SourceState::Connecting;
        } else {
            // Lagging: what is read is older than a few polls (PostgreSQL) or
            // health checks (Kafka) would explain.
            const std::int64_t slack =
                pg ? std::max<std::int64_t>(5000, 3 * m_config.postgres.pollInterval.count())
                   : 5000;
            const EpochMillis quietFrom = std::max(t->newestDataSeenAt, t->loadedAt);
            if (t->loadedAt == kNoTime) // loaded, but the model thread has not seen it yet
                state = SourceState::Loading;
            else if (covered == kNoTime || now - covered > slack)
                state = SourceState::Lagging;
            else if (t->quietAfter.count() > 0 && now - quietFrom > t->quietAfter.count())
                state = SourceState::Quiet;
            else
                state = SourceState::Live;
        }
        if (state != t->shown) {
            t->shown = state;
            t->shownSince = now;
        }
        h.state = state;
        h.since = t->shownSince;
        h.loadPercent = t->percent;
        h.lastDataAt = t->newestDataSeenAt;
        h.readTo = covered;
        h.lastErrorAt = t->lastErrorAt;
        h.lastError = t->lastError;
        out.push_back(std::move(h));
    }
    return out;
}

void Monitor::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queueSpace.notify_all(); // a source waiting for queue space stops waiting
    }
    {
        std::lock_guard lock(m_probeMutex); // no lost wakeup between its check and its wait
    }
    m_probeWake.notify_all();
    if (m_probe)
        m_probe->cancel(); // a probe query in flight ends now
    for (auto& t : m_threads)
        t.join();
    m_threads.clear();
}

std::vector<AnomalyChange> Monitor::pump(EpochMillis now) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_fatal.empty())
            throw SourceError(m_fatal, m_fatalIsConfig);
    }
    applyQueued(now, !m_live || m_windowJudged);
    if (m_live)
        judgeWindowWhenReady(now);
    if (!m_live || m_windowJudged)
        m_engine.tick(m_store, now);
    return m_engine.takeChanges();
}

std::size_t Monitor::applyRetention(EpochMillis now, Millis keepResolved) {
    RetentionPolicy policy = retentionPolicy();
    const std::size_t frozenLeft = m_live && m_windowJudged ? freezeFinal(now, policy) : 0;
    policy.packsFinal = m_live && m_windowJudged;
    RetentionResult r = callscope::applyRetention(m_store, m_engine, policy, now, keepResolved);
    r.left += frozenLeft;
    m_evictions.anomalies += r.anomaliesForgotten;
    m_evictions.anomalyBytes = m_engine.memoryBytes();
    m_evictions.storeBytes = m_store.memoryBytes() + m_evictions.anomalyBytes;
    if (r.left == 0)
        return 0;
    m_evictions.total += static_cast<std::int64_t>(r.left);
    m_evictions.overBudget += r.overBudget;
#ifdef __GLIBC__
    // The old store's pages go back to the system (glibc keeps freed memory
    // in its arenas otherwise, and the process never shrinks).
    malloc_trim(0);
#endif
    return r.left;
}

std::uint32_t Monitor::ensureCall(const std::string& callId, const std::atomic<bool>& cancel,
                                  ColdFetchStats* stats) {
    // (A packed call comes back whole, with its key-rotation siblings.)
    const std::uint32_t known = m_store.thawNamed(callId, false);
    if (known != CallStore::npos &&
        (m_store.call(known).hasRecord() || !m_config.readsPostgres())) {
        probeNow(known);
        return known;
    }
    // Record and attempts by key (while the Kafka reader connects)...
    std::future<void> kafkaReady;
    if (known == CallStore::npos && m_config.readsKafka() && m_config.readsPostgres())
        kafkaReady = std::async(std::launch::async, [&] { m_kafka.prepareColdRead(cancel); });
    struct Join {
        std::future<void>& f;
        ~Join() {
            if (f.valid())
                f.wait();
        }
    } join{kafkaReady};
    ObservationBatch pg =
        m_config.readsPostgres() ? m_postgres.fetchCalls({callId}, &cancel) : ObservationBatch{};
    if (kafkaReady.valid())
        kafkaReady.get();
    EpochMillis from = kNoTime, to = kNoTime, lastChange = kNoTime;
    bool finished = false;
    for (const auto& r : pg.records) {
        from = r.createdAt;
        to = r.expireAt;
        lastChange = std::max(lastChange, r.updatedAt);
        finished = isTerminal(r.status);
    }
    for (const auto& a : pg.attempts) {
        if (from == kNoTime || a.arrivedAt < from)
            from = a.arrivedAt;
        lastChange = std::max({lastChange, a.arrivedAt, a.finishedAt});
    }
    if (from == kNoTime)
        from = nowMillis() - 24 * 3'600'000; // no record: the last day
    m_store.unbury(callId);                  // (asked for: not the feed's re-read of a call gone)
    deliver(std::move(pg));
    // ...and receipts and caller events from one partition per topic, unless
    // they are in memory already (reading them again would double them).
    if (known == CallStore::npos && m_config.readsKafka()) {
        const EpochMillis now = nowMillis();
        const EpochMillis end = to == kNoTime || to > now ? kNoTime : to;
        // A finished record: its caller starts just before it, its receipt
        // follows its last change within receipt_grace and the caller's
        // confirmation comes with the receipt. That much (and a minute either
        // side) is read first; the rest of its window (hours of a busy
        // partition) only when the receipt, the caller's start or its end is
        // not in it.
        const EpochMillis nearFrom = from - kColdNearMs;
        const EpochMillis near = lastChange + m_config.detect.receiptGrace.count() + kColdNearMs;
        if (finished && lastChange != kNoTime && (end == kNoTime || near < end)) {
            ObservationBatch k = m_kafka.fetchCall(callId, nearFrom, near, cancel, stats);
            bool receipt = !m_config.readsReceipts();
            bool callerStart = !m_config.readsCallerEvents(), callerDone = callerStart;
            for (const auto& r : k.receipts)
                receipt |= isTerminal(r.status);
            for (const auto& e : k.callerEvents) {
                callerStart |= e.state == CallerState::Initiated;
                callerDone |= isTerminal(e.state) || e.state == CallerState::Escalated;
            }
            deliver(std::move(k));
            if (!receipt || !callerStart || !callerDone) {
                deliver(m_kafka.fetchCall(callId, from - kColdMarginMs, nearFrom, cancel, stats));
                deliver(m_kafka.fetchCall(callId, near, end, cancel, stats));
            }
        } else {
            deliver(m_kafka.fetchCall(callId, from - kColdMarginMs, end, cancel, stats));
        }
    }
    applyQueued(nowMillis(), true);
    const std::uint32_t i = m_store.find(callId);
    if (i != CallStore::npos && m_store.call(i).digest && m_store.call(i).hasRecord() &&
        m_config.readsPostgres()) {
        // Siblings by digest whose records are near this one, for the diagnosis.
        const CallState& c = m_store.call(i);
        const std::size_t known = m_store.size();
        deliver(m_postgres.fetchByDigest(m_store.digest(c.digest), m_store.timeOf(c, c.created),
                                         m_config.detect.keyRotationWindow, &cancel));
        applyQueued(nowMillis(), true);
        // The siblings' caller events tell a timed-out retry from a callId
        // made again (the diagnosis's cause): read them, from their own
        // partitions, over their records' lives and a minute either side.
        if (m_config.readsKafka()) {
            int fetched = 0;
            for (const std::uint32_t m : m_engine.siblings(m_store, i)) {
                if (m < known || m == i || fetched++ >= 4 || cancel)
                    continue;
                const CallState& s = m_store.call(m);
                const EpochMillis created = m_store.timeOf(s, s.created);
                const EpochMillis updated = m_store.timeOf(s, s.updated);
                if (created == kNoTime)
                    continue;
                deliver(m_kafka.fetchCall(m_store.callId(m), created - 60'000,
                                          std::max(created, updated) +
                                              m_config.detect.receiptGrace.count() + 60'000,
                                          cancel, stats));
            }
            applyQueued(nowMillis(), true);
        }
        std::vector<std::uint32_t> group = m_engine.siblings(m_store, i);
        group.push_back(i);
        m_engine.evaluate(m_store, group, nowMillis());
    }
    // The business effect of a SUCCESS past its delay, asked now (sampled or
    // not: this call was asked for by name).
    probeNow(i);
    return i;
}

std::string Monitor::resultSnapshot(const std::string& callId, const std::atomic<bool>* cancel) {
    if (!m_config.readsPostgres())
        return {};
    return m_postgres.resultSnapshot(callId, cancel);
}

} // namespace callscope
