#include "models/detection_engine.h"

#include <algorithm>
#include <set>

namespace callscope {
namespace {

bool executes(const CallEvent& e) {
    return e.type == EventType::Attempt &&
           (e.code == static_cast<std::uint8_t>(AttemptOutcome::Executed) ||
            e.code == static_cast<std::uint8_t>(AttemptOutcome::Reoccupied));
}

// The time of a call's earliest event.
EpochMillis firstAt(const CallStore& s, std::uint32_t i) {
    std::int32_t first = INT32_MAX;
    for (const CallEvent& e : s.events(i))
        first = std::min(first, e.dt);
    return s.timeOf(s.call(i), first == INT32_MAX ? 0 : first);
}

bool isCallerTerminal(std::uint8_t code) {
    return isTerminal(static_cast<CallerState>(code));
}

bool isCallerWaiting(std::uint8_t code) {
    const auto s = static_cast<CallerState>(code);
    return s == CallerState::TimeoutUnknown || s == CallerState::AwaitingReceipt;
}

void sortUnique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.erase(std::remove(v.begin(), v.end(), std::string()), v.end());
}

std::string terminalWord(RecordStatus s) { return std::string(toString(s)); }

} // namespace

std::string describeEvent(const CallStore& s, std::uint32_t call, const CallEvent& e) {
    const std::string inst = s.instance(e.instance);
    const std::string digest = shortDigest(s.digest(s.eventDigest(call, e)));
    std::string out;
    switch (e.type) {
    case EventType::Record:
        out = "record " + std::string(toString(static_cast<RecordStatus>(e.code))) +
              " (lock_version " + std::to_string(e.aux) + ")";
        break;
    case EventType::Attempt:
        out = "attempt " + std::string(toString(static_cast<AttemptOutcome>(e.code))) + " from " +
              (inst.empty() ? "?" : inst);
        if (e.aux == kNoDt && executes(e))
            out += ", unfinished";
        else if (e.aux != kNoDt)
            out += ", took " + std::to_string(std::max<std::int64_t>(0, std::int64_t(e.aux) - e.dt)) + " ms";
        break;
    case EventType::Receipt:
        out = "receipt v" + std::to_string(e.aux) + " " +
              std::string(toString(static_cast<RecordStatus>(e.code)));
        if (!inst.empty())
            out += " from " + inst;
        if (e.flags & DuplicateReceipt)
            out += " (duplicate)";
        if (e.flags & OutOfOrderReceipt)
            out += " (out of order)";
        break;
    case EventType::Caller:
        out = "caller " + (inst.empty() ? std::string("?") : inst) + " " +
              std::string(toString(static_cast<CallerState>(e.code)));
        if (e.aux > 0)
            out += " (attempt " + std::to_string(e.aux) + ")";
        break;
    }
    if (!digest.empty())
        out += ", digest " + digest;
    return out;
}

std::vector<std::pair<AnomalyKind, std::string>> detectionsOff(const DetectionSources& s) {
    std::vector<std::pair<AnomalyKind, std::string>> off;
    const auto add = [&](AnomalyKind k, const char* why) { off.emplace_back(k, why); };
    const char* noRecord = "the idempotency record is not read (PostgreSQL is disabled)";
    const char* noReceipts = "no receipt topics are read";
    if (!s.records) {
        add(AnomalyKind::StuckProcessing, noRecord);
        add(AnomalyKind::ExpiredReplay, noRecord);
    }
    if (!s.attempts || !s.records)
        add(AnomalyKind::ConcurrentExecution, "the attempt log is not read");
    for (const AnomalyKind k : {AnomalyKind::ReceiptMissing, AnomalyKind::OrphanReceipt})
        if (!s.receipts || !s.records)
            add(k, s.receipts ? noRecord : noReceipts);
    if (!s.callerEvents)
        add(AnomalyKind::CallerStuck, "no caller event topics are read");
    if (!s.receipts && !s.callerEvents)
        add(AnomalyKind::ReceiptRegression, "neither receipts nor caller events are read");
    if (int{s.records} + int{s.receipts} + int{s.callerEvents} < 2)
        add(AnomalyKind::StateMismatch,
            "fewer than two of record, receipts and caller events are read: nothing to disagree");
    const bool attempts = s.attempts && s.records;
    if (!attempts && !s.callerEvents)
        add(AnomalyKind::DuplicateCaller, "neither attempts nor caller events are read");
    if (!attempts && !s.callerEvents && !s.receipts)
        add(AnomalyKind::DigestConflict, "only the record's digest is read");
    std::sort(off.begin(), off.end());
    return off;
}

DetectionEngine::DetectionEngine(DetectThresholds t, DetectionSources s)
    : m_t(t), m_sources(s) {}

std::string DetectionEngine::key(AnomalyKind k, const std::string& subject) {
    return std::string(toString(k)) + '\x1f' + subject;
}

void DetectionEngine::setReceiptCoverage(EpochMillis from, EpochMillis to) {
    if (m_coverageFrom == kNoTime || from < m_coverageFrom)
        m_coverageFrom = from;
    m_coverageTo = std::max(m_coverageTo, to);
}

Evidence DetectionEngine::evidenceOf(const CallStore& s, std::uint32_t call,
                                     const CallEvent& e) const {
    return Evidence{s.callId(call), s.timeOf(s.call(call), e.dt), describeEvent(s, call, e)};
}

void DetectionEngine::remap(const std::vector<std::uint32_t>& map) {
    decltype(m_deadlines) next;
    while (!m_deadlines.empty()) {
        Deadline d = m_deadlines.top();
        m_deadlines.pop();
        if (d.call < map.size() && map[d.call] != CallStore::npos)
            next.push(Deadline{d.at, map[d.call]});
    }
    m_deadlines.swap(next);
    std::vector<std::uint8_t> touched(map.size(), 0);
    for (std::size_t i = 0; i < map.size() && i < m_named.size(); ++i)
        if (map[i] != CallStore::npos && m_named[i]) {
            if (touched.size() <= map[i])
                touched.resize(map[i] + 1, 0);
            touched[map[i]] = 1;
        }
    m_named.swap(touched);
}

std::size_t DetectionEngine::forgetResolved(const CallStore& store, EpochMillis before) {
    std::vector<std::uint8_t> gone(m_anomalies.size(), 0);
    for (std::size_t k = 0; k < m_anomalies.size(); ++k) {
        const Anomaly& a = m_anomalies[k];
        gone[k] = !a.open && a.resolvedAt != kNoTime && a.resolvedAt < before;
    }
    return forget(store, gone);
}

std::size_t DetectionEngine::forget(const CallStore& store, const std::vector<std::uint8_t>& gone) {
    const auto forgotten = static_cast<std::size_t>(std::count(gone.begin(), gone.end(), 1));
    if (forgotten == 0)
        return 0;
    std::vector<Anomaly> kept;
    kept.reserve(m_anomalies.size() - forgotten);
    for (std::size_t k = 0; k < m_anomalies.size(); ++k) {
        if (!gone[k])
            kept.push_back(std::move(m_anomalies[k]));
        else
            m_changes.push_back({ChangeKind::Forgotten, std::move(m_anomalies[k])});
    }
    m_anomalies.swap(kept);
    m_index.clear();
    std::fill(m_named.begin(), m_named.end(), 0);
    for (std::size_t k = 0; k < m_anomalies.size(); ++k) {
        const Anomaly& a = m_anomalies[k];
        m_index.emplace(key(a.kind, a.subject), k);
        for (const std::string& id : a.callIds)
            if (const std::uint32_t i = store.find(id); i != CallStore::npos && i < m_named.size())
                m_named[i] = 1;
    }
    return forgotten;
}

namespace {

// Heap bytes of a string beyond the object itself (none within the SSO buffer).
std::size_t heapBytes(const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 + 16 : 0;
}

std::size_t heapBytes(const std::vector<std::string>& v) {
    std::size_t n = v.capacity() * sizeof(std::string) + 16;
    for (const std::string& s : v)
        n += heapBytes(s);
    return n;
}

std::size_t anomalyBytes(const Anomaly& a) {
    std::size_t n = sizeof(Anomaly) + heapBytes(a.callIds) + heapBytes(a.instances) +
                    heapBytes(a.digests) + heapBytes(a.summary) + heapBytes(a.subject) +
                    a.evidence.capacity() * sizeof(Evidence) + 16;
    for (const Evidence& e : a.evidence)
        n += heapBytes(e.callId) + heapBytes(e.what);
    // Its entry in the index: a node with the key, and a bucket.
    return n + sizeof(std::pair<const std::string, std::size_t>) + 32 + a.subject.size() +
           sizeof(void*);
}

} // namespace

std::size_t DetectionEngine::memoryBytes() const {
    std::size_t n = m_anomalies.capacity() * sizeof(Anomaly) + m_named.capacity() +
                    m_deadlines.size() * sizeof(Deadline);
    for (const Anomaly& a : m_anomalies)
        n += anomalyBytes(a) - sizeof(Anomaly);
    return n;
}

std::size_t DetectionEngine::forgetOldest(const CallStore& store, std::size_t bytes,
                                          std::size_t perCall,
                                          const std::vector<std::uint8_t>& leaving) {
    // Resolved before open, then oldest detected first.
    std::vector<std::pair<std::pair<bool, EpochMillis>, std::size_t>> order;
    order.reserve(m_anomalies.size());
    for (std::size_t k = 0; k < m_anomalies.size(); ++k)
        order.push_back({{m_anomalies[k].open, m_anomalies[k].detectedAt}, k});
    std::sort(order.begin(), order.end());
    // The anomalies naming each call in memory, to forget those sharing a call together.
    std::unordered_map<std::uint32_t, std::vector<std::size_t>> namedBy;
    std::vector<std::vector<std::uint32_t>> callsOf(m_anomalies.size());
    for (std::size_t k = 0; k < m_anomalies.size(); ++k)
        for (const std::string& id : m_anomalies[k].callIds)
            if (const std::uint32_t i = store.find(id); i != CallStore::npos) {
                callsOf[k].push_back(i);
                namedBy[i].push_back(k);
            }
    std::vector<std::uint8_t> gone(m_anomalies.size(), 0);
    std::unordered_set<std::uint32_t> freedCalls;
    std::size_t freed = 0;
    for (const auto& [_, first] : order) {
        if (freed >= bytes)
            break;
        if (gone[first])
            continue;
        std::vector<std::size_t> group{first};
        gone[first] = 1;
        while (!group.empty()) {
            const std::size_t k = group.back();
            group.pop_back();
            freed += anomalyBytes(m_anomalies[k]);
            for (const std::uint32_t i : callsOf[k]) {
                if (!freedCalls.insert(i).second)
                    continue;
                if (i >= leaving.size() || !leaving[i])
                    freed += perCall;
                for (const std::size_t other : namedBy[i])
                    if (!gone[other]) {
                        gone[other] = 1;
                        group.push_back(other);
                    }
            }
        }
    }
    return forget(store, gone);
}

void DetectionEngine::schedule(std::uint32_t call, EpochMillis at) {
    m_deadlines.push(Deadline{at, call});
}

void DetectionEngine::evaluate(const CallStore& s, const std::vector<std::uint32_t>& touched,
                               EpochMillis now) {
    std::unordered_set<std::uint64_t> judged;
    for (const std::uint32_t i : touched) {
        judgeCall(s, i, now);
        judgeKeyRotation(s, i, now, &judged);
    }
}

void DetectionEngine::evaluateAll(const CallStore& s, EpochMillis now) {
    m_deadlines = {};
    std::unordered_set<std::uint64_t> judged;
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        judgeCall(s, i, now);
        judgeKeyRotation(s, i, now, &judged);
    }
}

void DetectionEngine::tick(const CallStore& s, EpochMillis now) {
    std::vector<std::uint32_t> due;
    while (!m_deadlines.empty() && m_deadlines.top().at <= now) {
        due.push_back(m_deadlines.top().call);
        m_deadlines.pop();
    }
    std::sort(due.begin(), due.end());
    due.erase(std::unique(due.begin(), due.end()), due.end());
    for (const std::uint32_t i : due)
        if (i < s.size())
            judgeCall(s, i, now);
}

void DetectionEngine::judgeCall(const CallStore& s, std::uint32_t i, EpochMillis now) {
    const CallState& c = s.call(i);
    std::string callIdText; // made only when something is recorded or settled
    const auto id = [&]() -> const std::string& {
        if (callIdText.empty())
            callIdText = s.callId(i);
        return callIdText;
    };
    const bool named = holds(i);
    const auto settleIfNamed = [&](AnomalyKind k) {
        if (named)
            settle(k, id(), now);
    };
    const auto ev = s.events(i);
    std::optional<EpochMillis> nextDeadline;
    const auto wakeAt = [&](EpochMillis t) {
        if (!nextDeadline || t < *nextDeadline)
            nextDeadline = t;
    };
    const auto single = [&](AnomalyKind k, Severity sev) {
        Finding f;
        f.kind = k;
        f.severity = sev;
        f.subject = id();
        f.callIds = {id()};
        return f;
    };
    const EpochMillis updatedAt = s.timeOf(c, c.updated);
    const std::string firstSource = s.instance(c.firstSource);

    // --- stuck_processing: PROCESSING and now - updated_at > stuck_after
    {
        bool holds = false;
        if (c.hasRecord() && c.recordStatus() == RecordStatus::Processing && updatedAt != kNoTime) {
            const EpochMillis age = now - updatedAt;
            const std::int64_t after = m_t.stuckAfter.count();
            // Judged on a read of the table made after the threshold passed:
            // a source that lags (or is down) cannot show the record finishing.
            const bool seen = m_recordsReadTo == kNoTime || m_recordsReadTo > updatedAt + after;
            if (age > after && !seen) {
                wakeAt(now + 1000);
                if (named && m_index.count(key(AnomalyKind::StuckProcessing, id())))
                    holds = true; // already open: keep it until the tables are read again
            } else if (age > after) {
                holds = true;
                Finding f = single(AnomalyKind::StuckProcessing,
                                   age > 4 * after ? Severity::Critical : Severity::Warning);
                f.summary = "record PROCESSING for " + formatDuration(Millis{age >= 1000 ? age / 1000 * 1000 : age}) +
                            " (stuck after " + formatDuration(m_t.stuckAfter) + "), lock_version " +
                            std::to_string(c.lockVersion);
                if (!firstSource.empty())
                    f.instances.push_back(firstSource);
                for (const CallEvent& e : ev) {
                    if (e.type == EventType::Record ||
                        (e.type == EventType::Attempt && executes(e))) {
                        f.evidence.push_back(evidenceOf(s, i, e));
                        if (e.type == EventType::Attempt)
                            f.instances.push_back(s.instance(e.instance));
                    }
                }
                if (s.digest(c.digest).size())
                    f.digests.push_back(s.digest(c.digest));
                if (age <= 4 * after)
                    wakeAt(updatedAt + 4 * after + 1);
                record(std::move(f), now, {i});
            } else {
                wakeAt(updatedAt + after + 1);
            }
        }
        if (!holds)
            settleIfNamed(AnomalyKind::StuckProcessing);
    }

    // --- digest_conflict: two or more request digests for one callId
    if (s.digestCount(i) >= 2) {
        const auto digests = s.digestsOf(i);
        {
            Finding f = single(AnomalyKind::DigestConflict, Severity::Warning);
            std::set<std::uint32_t> shown;
            for (const CallEvent& e : ev) {
                const std::uint32_t d = s.eventDigest(i, e);
                if (d && shown.insert(d).second) {
                    f.evidence.push_back(evidenceOf(s, i, e));
                    if (e.type != EventType::Receipt && e.type != EventType::Record)
                        f.instances.push_back(s.instance(e.instance));
                }
            }
            for (const std::uint32_t d : digests)
                f.digests.push_back(s.digest(d));
            std::string list;
            for (const auto& d : f.digests)
                list += (list.empty() ? "" : ", ") + shortDigest(d);
            f.summary = std::to_string(digests.size()) +
                        " request digests under one callId: " + list;
            record(std::move(f), now, {i});
        }
    }

    // --- duplicate_caller: two or more caller instances act on one callId
    {
        std::uint32_t firstInstance = 0;
        bool several = false;
        for (const CallEvent& e : ev)
            if ((e.type == EventType::Attempt || e.type == EventType::Caller ||
                 e.type == EventType::Record) && e.instance != 0) {
                if (firstInstance == 0)
                    firstInstance = e.instance;
                else if (e.instance != firstInstance)
                    several = true;
            }
        std::vector<std::pair<std::uint32_t, const CallEvent*>> firstBy; // instance -> first event
        const auto note = [&](std::uint32_t inst, const CallEvent& e) {
            if (inst == 0)
                return;
            for (auto& [k, first] : firstBy)
                if (k == inst) {
                    if (e.dt < first->dt)
                        first = &e;
                    return;
                }
            firstBy.emplace_back(inst, &e);
        };
        if (several)
            for (const CallEvent& e : ev)
                if (e.type == EventType::Attempt || e.type == EventType::Caller ||
                    (e.type == EventType::Record && e.instance != 0))
                    note(e.instance, e);
        if (firstBy.size() >= 2) {
            Finding f = single(AnomalyKind::DuplicateCaller, Severity::Warning);
            std::sort(firstBy.begin(), firstBy.end(),
                      [](const auto& a, const auto& b) { return a.second->dt < b.second->dt; });
            std::string list;
            for (const auto& [inst, e] : firstBy) {
                f.instances.push_back(s.instance(inst));
                Evidence x = evidenceOf(s, i, *e);
                x.what = s.instance(inst) + " first acted: " + x.what;
                f.evidence.push_back(std::move(x));
                list += (list.empty() ? "" : ", ") + s.instance(inst);
            }
            if (c.digest)
                f.digests.push_back(s.digest(c.digest));
            f.summary = std::to_string(firstBy.size()) + " caller instances acted on one callId: " + list;
            record(std::move(f), now, {i});
        }
    }

    // --- concurrent_execution: executions overlapping where the first was not stale
    int executions = 0;
    for (const CallEvent& e : ev)
        executions += executes(e);
    if (m_sources.attempts && executions >= 2) {
        std::vector<const CallEvent*> runs;
        for (const CallEvent& e : ev)
            if (executes(e))
                runs.push_back(&e);
        std::sort(runs.begin(), runs.end(),
                  [](const CallEvent* a, const CallEvent* b) { return a->dt < b->dt; });
        std::vector<const CallEvent*> overlapping;
        const CallEvent* running = nullptr; // the latest execution before this one
        for (const CallEvent* e : runs) {
            // A REOCCUPIED run took over a PROCESSING the server judged stale:
            // that is the protocol working, not a broken placeholder.
            const bool stillRunning =
                running && (running->aux == kNoDt || e->dt < running->aux);
            if (stillRunning &&
                e->code == static_cast<std::uint8_t>(AttemptOutcome::Executed)) {
                if (overlapping.empty() || overlapping.back() != running)
                    overlapping.push_back(running);
                overlapping.push_back(e);
            }
            running = e;
        }
        if (!overlapping.empty()) {
            Finding f = single(AnomalyKind::ConcurrentExecution, Severity::Critical);
            for (const CallEvent* e : overlapping) {
                f.evidence.push_back(evidenceOf(s, i, *e));
                f.instances.push_back(s.instance(e->instance));
            }
            if (c.digest)
                f.digests.push_back(s.digest(c.digest));
            f.summary = std::to_string(overlapping.size()) +
                        " executions of one callId overlapped: the atomic placeholder failed";
            record(std::move(f), now, {i});
        }
    }

    // --- expired_replay: a retry after expire_at, or a record made again
    if (c.hasRecord()) {
        const EpochMillis expireAt = s.expireAt(c);
        const EpochMillis createdAt = s.timeOf(c, c.created);
        std::vector<const CallEvent*> late;
        bool executedAgain = false;
        for (const CallEvent& e : ev) {
            const EpochMillis t = s.timeOf(c, e.dt);
            if (e.type == EventType::Attempt && expireAt != kNoTime && t > expireAt) {
                late.push_back(&e);
                executedAgain |= executes(e);
            } else if (e.type == EventType::Caller && expireAt != kNoTime && t > expireAt &&
                       static_cast<CallerState>(e.code) == CallerState::AwaitingResponse &&
                       e.aux > 1) {
                late.push_back(&e);
            } else if (executes(e) && createdAt != kNoTime) {
                // An execution that ended before this record existed belongs to an
                // earlier incarnation (server clocks only; caller clocks differ).
                const EpochMillis end = e.aux != kNoDt ? s.timeOf(c, e.aux) : t + 1000;
                if (end < createdAt) {
                    late.push_back(&e);
                    executedAgain = true;
                }
            }
        }
        if (c.flags & RecordRecreated)
            executedAgain = true;
        if (!late.empty() || (c.flags & RecordRecreated)) {
            Finding f = single(AnomalyKind::ExpiredReplay,
                               executedAgain ? Severity::Critical : Severity::Warning);
            for (const CallEvent* e : late) {
                f.evidence.push_back(evidenceOf(s, i, *e));
                if (e->type != EventType::Record)
                    f.instances.push_back(s.instance(e->instance));
            }
            for (const CallEvent& e : ev)
                if (e.type == EventType::Record) {
                    Evidence x = evidenceOf(s, i, e);
                    x.what += ", created " + formatIsoMillis(createdAt) +
                              (expireAt != kNoTime ? ", expires " + formatIsoMillis(expireAt) : "");
                    f.evidence.push_back(std::move(x));
                    break;
                }
            if (c.digest)
                f.digests.push_back(s.digest(c.digest));
            f.summary = executedAgain
                            ? "executed again after the idempotency record expired (window too short)"
                            : "retried after the idempotency record expired (window too short)";
            record(std::move(f), now, {i});
        }
    }

    // Receipts: terminal statuses, versions.
    unsigned terminalReceipts = 0; // bit per RecordStatus
    std::optional<std::int32_t> clashingVersion; // one version, two statuses
    EpochMillis firstReceiptAt = kNoTime;
    for (std::size_t a = 0; a < ev.size(); ++a) {
        const CallEvent& e = ev[a];
        if (e.type != EventType::Receipt)
            continue;
        if (isTerminal(static_cast<RecordStatus>(e.code)))
            terminalReceipts |= 1u << e.code;
        for (std::size_t b = 0; b < a && !clashingVersion; ++b)
            if (ev[b].type == EventType::Receipt && ev[b].aux == e.aux && ev[b].code != e.code)
                clashingVersion = e.aux;
        const EpochMillis t = s.timeOf(c, e.dt);
        if (firstReceiptAt == kNoTime || t < firstReceiptAt)
            firstReceiptAt = t;
    }

    // --- receipt_missing: terminal for longer than receipt_grace, no terminal receipt
    {
        bool holds = false;
        if (m_sources.receipts && c.hasRecord() && isTerminal(c.recordStatus()) &&
            terminalReceipts == 0 && updatedAt != kNoTime) {
            const EpochMillis due = updatedAt + m_t.receiptGrace.count();
            const bool covered = m_coverageFrom != kNoTime && m_coverageFrom <= updatedAt &&
                                 m_coverageTo >= due;
            if (now > due && covered) {
                holds = true;
                Finding f = single(AnomalyKind::ReceiptMissing, Severity::Warning);
                for (const CallEvent& e : ev)
                    if (e.type == EventType::Record || e.type == EventType::Receipt)
                        f.evidence.push_back(evidenceOf(s, i, e));
                if (!firstSource.empty())
                    f.instances.push_back(firstSource);
                if (c.digest)
                    f.digests.push_back(s.digest(c.digest));
                f.summary = "record " + terminalWord(c.recordStatus()) + " since " +
                            formatIsoMillis(updatedAt) + ", no terminal receipt within " +
                            formatDuration(m_t.receiptGrace);
                record(std::move(f), now, {i});
            } else if (now <= due) {
                wakeAt(due + 1);
            } else if (m_coverageFrom != kNoTime && m_coverageFrom <= updatedAt) {
                wakeAt(now + 1000); // receipts are being read but not yet up to `due`
            }
        }
        if (!holds)
            settleIfNamed(AnomalyKind::ReceiptMissing);
    }

    // --- state_mismatch: terminal statuses disagree (record, receipt, caller)
    unsigned terminalViews = terminalReceipts;
    if (c.hasRecord() && isTerminal(c.recordStatus()))
        terminalViews |= 1u << static_cast<unsigned>(c.recordStatus());
    for (const CallEvent& e : ev)
        if (e.type == EventType::Caller && isCallerTerminal(e.code))
            terminalViews |= 1u << static_cast<unsigned>(
                static_cast<CallerState>(e.code) == CallerState::ConfirmedSuccess
                    ? RecordStatus::Success
                    : RecordStatus::Failed);
    if (__builtin_popcount(terminalViews) >= 2) {
        std::map<std::uint8_t, std::vector<const CallEvent*>> byStatus;
        const CallEvent* latestRecord = nullptr;
        for (const CallEvent& e : ev) {
            if (e.type == EventType::Record)
                latestRecord = &e;
            else if (e.type == EventType::Receipt && isTerminal(static_cast<RecordStatus>(e.code)))
                byStatus[e.code].push_back(&e);
            else if (e.type == EventType::Caller && isCallerTerminal(e.code))
                byStatus[static_cast<std::uint8_t>(
                             static_cast<CallerState>(e.code) == CallerState::ConfirmedSuccess
                                 ? RecordStatus::Success
                                 : RecordStatus::Failed)]
                    .push_back(&e);
        }
        if (latestRecord && c.hasRecord() && isTerminal(c.recordStatus()))
            byStatus[static_cast<std::uint8_t>(c.recordStatus())].push_back(latestRecord);
        if (byStatus.size() >= 2) {
            Finding f = single(AnomalyKind::StateMismatch, Severity::Critical);
            std::string list;
            for (const auto& [status, events] : byStatus) {
                for (const CallEvent* e : events) {
                    f.evidence.push_back(evidenceOf(s, i, *e));
                    if (e->type == EventType::Caller)
                        f.instances.push_back(s.instance(e->instance));
                }
                std::string who;
                for (const CallEvent* e : events) {
                    const char* name = e->type == EventType::Record    ? "record"
                                       : e->type == EventType::Receipt ? "receipt"
                                                                        : "caller";
                    if (who.find(name) == std::string::npos)
                        who += (who.empty() ? "" : "+") + std::string(name);
                }
                list += (list.empty() ? "" : "; ") + who + " " +
                        terminalWord(static_cast<RecordStatus>(status));
            }
            if (c.digest)
                f.digests.push_back(s.digest(c.digest));
            f.summary = "terminal states disagree: " + list;
            record(std::move(f), now, {i});
        }
    }

    // --- receipt_regression: terminal -> non-terminal caller, or one version two statuses
    bool callerRegressed = false, seenCallerTerminal = false;
    for (const CallEvent& e : ev)
        if (e.type == EventType::Caller) {
            callerRegressed |= seenCallerTerminal && !isCallerTerminal(e.code);
            seenCallerTerminal |= isCallerTerminal(e.code);
        }
    if (callerRegressed || clashingVersion) {
        Finding f = single(AnomalyKind::ReceiptRegression, Severity::Warning);
        const CallEvent* terminal = nullptr;
        for (const CallEvent& e : ev) {
            if (e.type != EventType::Caller)
                continue;
            if (terminal && !isCallerTerminal(e.code)) {
                f.evidence.push_back(evidenceOf(s, i, *terminal));
                f.evidence.push_back(evidenceOf(s, i, e));
                f.instances.push_back(s.instance(e.instance));
                f.summary = "caller moved from " +
                            std::string(toString(static_cast<CallerState>(terminal->code))) +
                            " back to " + std::string(toString(static_cast<CallerState>(e.code)));
                break;
            }
            if (isCallerTerminal(e.code) && !terminal)
                terminal = &e;
        }
        if (clashingVersion) {
            for (const CallEvent& e : ev)
                if (e.type == EventType::Receipt && e.aux == *clashingVersion)
                    f.evidence.push_back(evidenceOf(s, i, e));
            if (f.summary.empty())
                f.summary = "receipt version " + std::to_string(*clashingVersion) +
                            " delivered with different statuses";
        }
        if (!f.evidence.empty()) {
            if (c.digest)
                f.digests.push_back(s.digest(c.digest));
            record(std::move(f), now, {i});
        }
    }

    // --- caller_stuck: waiting longer than caller_alert_after, never confirmed or escalated
    if (m_sources.callerEvents) {
        bool holds = false;
        bool settledByCaller = false;
        const CallEvent* waitingSince = nullptr;
        for (const CallEvent& e : ev) {
            if (e.type != EventType::Caller)
                continue;
            if (isCallerTerminal(e.code) ||
                static_cast<CallerState>(e.code) == CallerState::Escalated)
                settledByCaller = true;
            if (isCallerWaiting(e.code)) {
                if (!waitingSince)
                    waitingSince = &e;
            } else {
                waitingSince = nullptr;
            }
        }
        if (!settledByCaller && waitingSince) {
            const EpochMillis since = s.timeOf(c, waitingSince->dt);
            const EpochMillis due = since + m_t.callerAlertAfter.count();
            // The caller's confirmation may be in messages not read yet.
            const bool read = m_settled || m_coverageTo == kNoTime || m_coverageTo > due;
            if (now > due && !read) {
                wakeAt(now + 1000);
                if (named && m_index.count(key(AnomalyKind::CallerStuck, id())))
                    holds = true; // already open: keep it until the topics are read
            } else if (now > due) {
                holds = true;
                Finding f = single(AnomalyKind::CallerStuck, Severity::Warning);
                const std::string inst = s.instance(waitingSince->instance);
                f.instances.push_back(inst);
                for (const CallEvent& e : ev)
                    if (e.type == EventType::Caller)
                        f.evidence.push_back(evidenceOf(s, i, e));
                if (c.digest)
                    f.digests.push_back(s.digest(c.digest));
                f.summary = "caller " + inst + " waiting since " + formatIsoMillis(since) +
                            " (" + std::string(toString(static_cast<CallerState>(c.caller - 1))) +
                            "), no confirmation or escalation after " +
                            formatDuration(m_t.callerAlertAfter);
                record(std::move(f), now, {i});
            } else {
                wakeAt(due + 1);
            }
        }
        if (!holds)
            settleIfNamed(AnomalyKind::CallerStuck);
    }

    // --- orphan_receipt: a receipt for a callId with no record
    {
        bool holds = false;
        if (m_sources.records && !c.hasRecord() && firstReceiptAt != kNoTime) {
            const EpochMillis due = firstReceiptAt + m_t.receiptGrace.count();
            if (m_settled || now > due) {
                holds = true;
                Finding f = single(AnomalyKind::OrphanReceipt, Severity::Info);
                for (const CallEvent& e : ev)
                    if (e.type == EventType::Receipt) {
                        f.evidence.push_back(evidenceOf(s, i, e));
                        const std::uint32_t d = s.eventDigest(i, e);
                        if (d)
                            f.digests.push_back(s.digest(d));
                    }
                f.summary = "receipt for a callId with no idempotency record";
                record(std::move(f), now, {i});
            } else {
                wakeAt(due + 1);
            }
        }
        if (!holds)
            settleIfNamed(AnomalyKind::OrphanReceipt);
    }

    if (nextDeadline)
        schedule(i, *nextDeadline);
}

std::vector<std::uint32_t> DetectionEngine::siblings(const CallStore& s, std::uint32_t i) const {
    const CallState& c = s.call(i);
    const bool byDigest = c.digest && s.digestShared(c.digest);
    const bool byBizNo = c.bizNo && s.bizNoShared(c.bizNo);
    if (!byDigest && !byBizNo)
        return {};
    std::vector<std::uint32_t> members;
    const auto add = [&](std::vector<std::uint32_t>&& calls, const std::string& what) {
        if (calls.size() > kMaxKeyRotationGroup) {
            const std::string key = what + " shared by more than " +
                                    std::to_string(kMaxKeyRotationGroup) +
                                    " calls: a placeholder, not grouped for key_rotation";
            if (m_placeholderKeys.insert(what).second) {
                m_placeholderList.push_back(key);
                m_newPlaceholders.push_back(key);
            }
            return;
        }
        members.insert(members.end(), calls.begin(), calls.end());
    };
    if (byDigest)
        add(s.callsWithDigest(c.digest), "digest " + s.digest(c.digest));
    if (byBizNo)
        add(s.callsWithBizNo(c.bizNo), "bizNo " + s.bizNo(c.bizNo));
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    const std::int64_t window = m_t.keyRotationWindow.count();
    std::vector<std::uint32_t> out;
    for (const std::uint32_t m : members)
        if (std::llabs(firstAt(s, m) - firstAt(s, i)) <= window)
            out.push_back(m);
    return out.size() >= 2 ? out : std::vector<std::uint32_t>{};
}

std::vector<std::string> DetectionEngine::takeNewPlaceholders() {
    std::vector<std::string> out;
    out.swap(m_newPlaceholders);
    return out;
}

void DetectionEngine::judgeKeyRotation(const CallStore& s, std::uint32_t i, EpochMillis now,
                                       std::unordered_set<std::uint64_t>* judged) {
    const std::vector<std::uint32_t> members = siblings(s, i);
    if (members.size() < 2)
        return;
    if (judged) { // FNV-1a over the sorted members: the same group, judged once a pass
        std::uint64_t h = 1469598103934665603ull;
        for (const std::uint32_t m : members)
            h = (h ^ m) * 1099511628211ull;
        if (!judged->insert(h).second)
            return;
    }
    const CallState& self = s.call(i);
    // The group is named after its earliest callId, whichever member is judged.
    std::uint32_t earliest = members.front();
    for (const std::uint32_t m : members)
        if (firstAt(s, m) < firstAt(s, earliest) ||
            (firstAt(s, m) == firstAt(s, earliest) && s.callId(m) < s.callId(earliest)))
            earliest = m;
    Finding f;
    f.kind = AnomalyKind::KeyRotation;
    f.subject = s.callId(earliest);
    int executed = 0;
    for (const std::uint32_t m : members) {
        const CallState& c = s.call(m);
        f.callIds.push_back(s.callId(m));
        bool ran = c.hasRecord();
        const CallEvent* first = nullptr;
        for (const CallEvent& e : s.events(m)) {
            ran |= executes(e);
            // Without the record, a SUCCESS receipt is the proof the server ran it.
            ran |= !m_sources.records && e.type == EventType::Receipt &&
                   e.code == static_cast<std::uint8_t>(RecordStatus::Success);
            if (!first || e.dt < first->dt)
                first = &e;
            if (e.type == EventType::Caller || e.type == EventType::Attempt)
                f.instances.push_back(s.instance(e.instance));
            if (executes(e))
                f.evidence.push_back(evidenceOf(s, m, e));
        }
        if (first && !executes(*first))
            f.evidence.push_back(evidenceOf(s, m, *first));
        executed += ran;
    }
    const bool sameDigest = self.digest != 0 && s.callsWithDigest(self.digest).size() >= 2;
    if (self.digest)
        f.digests.push_back(s.digest(self.digest));
    f.severity = executed >= 2 ? Severity::Critical : Severity::Warning;
    f.summary = (sameDigest ? "digest " + shortDigest(s.digest(self.digest))
                            : "bizNo " + s.bizNo(self.bizNo)) +
                " under " + std::to_string(members.size()) + " callIds, executed under " +
                std::to_string(executed) + ": a timed-out call retried with a new key";
    record(std::move(f), now, members);
}

void DetectionEngine::record(Finding&& f, EpochMillis now,
                             std::initializer_list<std::uint32_t> calls) {
    record(std::move(f), now, std::vector<std::uint32_t>(calls));
}

void DetectionEngine::record(Finding&& f, EpochMillis now, const std::vector<std::uint32_t>& calls) {
    for (const std::uint32_t call : calls) {
        if (m_named.size() <= call)
            m_named.resize(call + 1, 0);
        m_named[call] = 1;
    }
    sortUnique(f.callIds);
    sortUnique(f.instances);
    sortUnique(f.digests);
    std::sort(f.evidence.begin(), f.evidence.end(),
              [](const Evidence& a, const Evidence& b) { return a.at < b.at; });
    const std::string k = key(f.kind, f.subject);
    const auto it = m_index.find(k);
    if (it == m_index.end()) {
        Anomaly a;
        a.id = m_nextId++;
        a.kind = f.kind;
        a.severity = f.severity;
        a.callIds = std::move(f.callIds);
        a.instances = std::move(f.instances);
        a.digests = std::move(f.digests);
        a.summary = std::move(f.summary);
        a.evidence = std::move(f.evidence);
        a.subject = f.subject;
        a.firstEventAt = a.evidence.empty() ? now : a.evidence.front().at;
        a.detectedAt = a.changedAt = now;
        m_index.emplace(k, m_anomalies.size());
        m_anomalies.push_back(a);
        m_changes.push_back({ChangeKind::Opened, std::move(a)});
        return;
    }
    Anomaly& a = m_anomalies[it->second];
    const bool reopened = !a.open;
    const bool changed = reopened || a.severity != f.severity || a.callIds != f.callIds ||
                         a.instances != f.instances || a.digests != f.digests ||
                         a.evidence.size() != f.evidence.size();
    a.severity = f.severity;
    a.callIds = std::move(f.callIds);
    a.instances = std::move(f.instances);
    a.digests = std::move(f.digests);
    a.summary = std::move(f.summary); // ages in the text move on without being a change
    a.evidence = std::move(f.evidence);
    if (!a.evidence.empty() && a.evidence.front().at < a.firstEventAt)
        a.firstEventAt = a.evidence.front().at;
    if (changed) {
        a.open = true;
        a.resolvedAt = kNoTime;
        a.changedAt = now;
        m_changes.push_back({reopened ? ChangeKind::Opened : ChangeKind::Changed, a});
    }
}

void DetectionEngine::settle(AnomalyKind kind, const std::string& subject, EpochMillis now) {
    const auto it = m_index.find(key(kind, subject));
    if (it == m_index.end())
        return;
    Anomaly& a = m_anomalies[it->second];
    if (!a.open)
        return;
    a.open = false;
    a.resolvedAt = a.changedAt = now;
    m_changes.push_back({ChangeKind::Resolved, a});
}

std::vector<AnomalyChange> DetectionEngine::takeChanges() {
    std::vector<AnomalyChange> out;
    out.swap(m_changes);
    return out;
}

std::vector<const Anomaly*> DetectionEngine::anomaliesOf(const std::string& callId) const {
    std::vector<const Anomaly*> out;
    for (const Anomaly& a : m_anomalies)
        if (std::binary_search(a.callIds.begin(), a.callIds.end(), callId))
            out.push_back(&a);
    return out;
}

std::size_t DetectionEngine::openCount() const {
    return static_cast<std::size_t>(
        std::count_if(m_anomalies.begin(), m_anomalies.end(), [](const Anomaly& a) { return a.open; }));
}

} // namespace callscope
