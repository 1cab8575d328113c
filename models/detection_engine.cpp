#include "models/detection_engine.h"

#include <algorithm>
#include <set>

namespace callscope {
namespace {

void sortUnique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.erase(std::remove(v.begin(), v.end(), std::string()), v.end());
}

} // namespace

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
    if (!s.probe || !s.records)
        add(AnomalyKind::EffectMissing,
            s.records ? "no business-effect probe is configured ([probe] sql)"
                      : "the idempotency record is not read (PostgreSQL is disabled)");
    if (!s.callerEvents || !s.attempts || !s.records)
        add(AnomalyKind::CallIdRewritten,
            !s.callerEvents ? "no caller event topics are read: no traceIds from the caller"
            : !s.records    ? "the idempotency record is not read (PostgreSQL is disabled)"
                            : "the attempt log is not read: no traceIds from the server");
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

DetectionEngine::DetectionEngine(DetectThresholds t, DetectionSources s) : m_t(t), m_sources(s) {}

void DetectionEngine::setReceiptCoverage(EpochMillis from, EpochMillis to) {
    if (m_coverage.kafkaFrom == kNoTime || from < m_coverage.kafkaFrom)
        m_coverage.kafkaFrom = from;
    m_coverage.kafkaTo = std::max(m_coverage.kafkaTo, to);
}

void DetectionEngine::remap(const std::vector<std::uint32_t>& map) {
    m_placeholderIds.clear(); // the compacted store numbers digests and bizNos afresh
    m_placeholderIdsStale = !m_placeholderTexts.empty();
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
        m_index.emplace(anomalyKey(a.kind, a.subject), k);
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
        judgeGroupOf(s, i, now, &judged);
    }
}

void DetectionEngine::evaluateAll(const CallStore& s, EpochMillis now) {
    m_deadlines = {};
    std::unordered_set<std::uint64_t> judged;
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        judgeCall(s, i, now);
        judgeGroupOf(s, i, now, &judged);
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
    std::unordered_set<std::uint64_t> judged;
    for (const std::uint32_t i : due)
        if (i < s.size()) {
            judgeCall(s, i, now);
            judgeGroupOf(s, i, now, &judged); // a group waiting for both sources
        }
}

void DetectionEngine::judgeCall(const CallStore& s, std::uint32_t i, EpochMillis now) {
    const CallFacts call(s, i, now, m_t, m_sources, m_coverage, m_index);
    const bool named = holds(i);
    EpochMillis wakeAt = kNoTime;
    for (const CallDetector& detector : kCallDetectors) {
        Verdict v = detector.judge(call);
        if (v.wakeAt != kNoTime && (wakeAt == kNoTime || v.wakeAt < wakeAt))
            wakeAt = v.wakeAt;
        if (v.finding)
            record(std::move(*v.finding), now, {i});
        else if (!v.keep && named && detector.resolves)
            settle(detector.kind, call.callId(), now);
    }
    if (wakeAt != kNoTime)
        schedule(i, wakeAt);
    if (m_sources.callerEvents && m_sources.attempts && m_sources.records)
        for (const TraceLink* link : s.traceLinksOf(i))
            judgeRewrite(s, i, *link, now);
}

void DetectionEngine::judgeRewrite(const CallStore& s, std::uint32_t i, const TraceLink& link,
                                   EpochMillis now) {
    const auto pair = rewrittenPair(s, link);
    if (!pair) { // the caller's callId reached the server after all (or the reverse)
        if (holds(link.first) || holds(link.other))
            for (const std::uint32_t c : {link.first, link.other})
                settle(AnomalyKind::CallIdRewritten, s.callId(c), now);
        return;
    }
    // Live: each end's events come from its own source, at its own pace; the
    // caller's callId may yet reach the server (or the server's the caller),
    // so the pair is judged once both sources are read a grace past both.
    const EpochMillis settledAt =
        std::max(s.lastEventAt(pair->callerSide), s.lastEventAt(pair->serverSide)) +
        m_t.receiptGrace.count();
    const auto behind = [&](EpochMillis readTo) { return readTo != kNoTime && readTo < settledAt; };
    if (!m_coverage.settled &&
        (now < settledAt || behind(m_coverage.kafkaTo) || behind(m_coverage.recordsReadTo))) {
        schedule(i, std::max(settledAt, now + 1000));
        return;
    }
    record(judgeCallIdRewritten(s, link, *pair), now, {pair->callerSide, pair->serverSide});
}

std::vector<std::uint32_t> DetectionEngine::siblings(const CallStore& s, std::uint32_t i) const {
    const CallState& c = s.call(i);
    const bool byDigest = c.digest && s.digestShared(c.digest);
    const bool byBizNo = c.bizNo && s.bizNoShared(c.bizNo);
    if (!byDigest && !byBizNo)
        return {};
    std::vector<std::uint32_t> members;
    if (m_placeholderIdsStale) { // (few: their ids looked up again)
        for (const auto& [digest, text] : m_placeholderTexts)
            if (const std::uint32_t id = digest ? s.digestId(text) : s.bizNoId(text))
                m_placeholderIds.insert(std::uint64_t{digest} << 32 | id);
        m_placeholderIdsStale = false;
    }
    // A placeholder is known by its id once found: each member of a key
    // shared by 100k calls costs O(1) here, not a copy of 100k owners. It
    // stays one when most of its calls have left (a window's final calls
    // do, and the frozen ones go with the load).
    const auto placeholder = [&](bool digest, std::uint32_t id, std::size_t count) {
        if (m_placeholderIds.count(std::uint64_t{digest} << 32 | id))
            return true;
        if (count <= kMaxKeyRotationGroup)
            return false;
        m_placeholderIds.insert(std::uint64_t{digest} << 32 | id);
        // First met: said once by its text.
        const std::string text = digest ? s.digest(id) : s.bizNo(id);
        const std::string what = (digest ? "digest " : "bizNo ") + text;
        if (m_placeholderKeys.insert(what).second) {
            m_placeholderTexts.emplace_back(digest, text);
            const std::string key = what + " shared by more than " +
                                    std::to_string(kMaxKeyRotationGroup) +
                                    " calls: a placeholder, not grouped for key_rotation";
            m_placeholderList.push_back(key);
            m_newPlaceholders.push_back(key);
        }
        return true;
    };
    const auto add = [&](std::vector<std::uint32_t>&& calls) {
        members.insert(members.end(), calls.begin(), calls.end());
    };
    if (byDigest && !placeholder(true, c.digest, s.callsWithDigestCount(c.digest)))
        add(s.callsWithDigest(c.digest));
    if (byBizNo && !placeholder(false, c.bizNo, s.callsWithBizNoCount(c.bizNo)))
        add(s.callsWithBizNo(c.bizNo));
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    const std::int64_t window = m_t.keyRotationWindow.count();
    const EpochMillis first = firstEventAt(s, i);
    std::vector<std::uint32_t> out;
    for (const std::uint32_t m : members)
        if (std::llabs(firstEventAt(s, m) - first) <= window)
            out.push_back(m);
    return out.size() >= 2 ? out : std::vector<std::uint32_t>{};
}

std::vector<std::string> DetectionEngine::takeNewPlaceholders() {
    std::vector<std::string> out;
    out.swap(m_newPlaceholders);
    return out;
}

void DetectionEngine::judgeGroupOf(const CallStore& s, std::uint32_t i, EpochMillis now,
                                   std::unordered_set<std::uint64_t>* judged) {
    const std::vector<std::uint32_t> group = siblings(s, i);
    if (group.size() < 2)
        return;
    // A caller's callId rewritten in transit shares its digest with the
    // server's: one call under two names (callid_rewritten), not a retry.
    std::vector<std::uint32_t> members;
    for (const std::uint32_t m : group) {
        bool renamed = false;
        for (const TraceLink* link : s.traceLinksOf(m))
            if (const auto pair = rewrittenPair(s, *link);
                pair && pair->callerSide == m &&
                std::binary_search(group.begin(), group.end(), pair->serverSide))
                renamed = true;
        if (!renamed)
            members.push_back(m);
    }
    const std::uint32_t groupSubject = keyRotationSubject(s, group);
    if (members.size() < 2) {
        settle(AnomalyKind::KeyRotation, s.callId(groupSubject), now);
        return;
    }
    // Live: a callId seen only at the caller beside one not seen there may be
    // one call under two names whose traceIds are not read yet (a receipt comes
    // before the attempt row): judged once both sources are read a grace past.
    if (!m_coverage.settled) {
        bool callerOnly = false, serverOnly = false;
        EpochMillis last = kNoTime;
        for (const std::uint32_t m : members) {
            bool caller = false, server = s.call(m).hasRecord();
            for (const CallEvent& e : s.events(m)) {
                caller |= e.type == EventType::Caller;
                server |= e.type != EventType::Caller;
            }
            callerOnly |= caller && !server;
            serverOnly |= !caller && server;
            last = std::max(last, s.lastEventAt(m));
        }
        const EpochMillis settledAt = last + m_t.receiptGrace.count();
        const auto behind = [&](EpochMillis to) { return to != kNoTime && to < settledAt; };
        if (callerOnly && serverOnly && m_sources.callerEvents && m_sources.attempts &&
            (now < settledAt || behind(m_coverage.kafkaTo) || behind(m_coverage.recordsReadTo))) {
            schedule(i, std::max(settledAt, now + 1000));
            return;
        }
    }
    if (members.size() < group.size() && keyRotationSubject(s, members) != groupSubject)
        settle(AnomalyKind::KeyRotation, s.callId(groupSubject), now); // named afresh below
    if (judged) { // FNV-1a over the sorted members: the same group, judged once a pass
        std::uint64_t h = 1469598103934665603ull;
        for (const std::uint32_t m : members)
            h = (h ^ m) * 1099511628211ull;
        if (!judged->insert(h).second)
            return;
    }
    record(callscope::judgeKeyRotation(s, members, i, m_sources), now, members);
}

void DetectionEngine::record(Finding&& f, EpochMillis now,
                             std::initializer_list<std::uint32_t> calls) {
    record(std::move(f), now, std::vector<std::uint32_t>(calls));
}

void DetectionEngine::record(Finding&& f, EpochMillis now,
                             const std::vector<std::uint32_t>& calls) {
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
    const std::string k = anomalyKey(f.kind, f.subject);
    const auto it = m_index.find(k);
    if (it == m_index.end()) {
        Anomaly a;
        a.id = m_nextId++;
        a.kind = f.kind;
        a.severity = f.severity;
        a.callIds = std::move(f.callIds);
        a.instances = std::move(f.instances);
        a.digests = std::move(f.digests);
        a.cause = std::move(f.cause);
        a.summary = std::move(f.summary);
        a.evidence = std::move(f.evidence);
        a.since = f.since;
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
                         a.evidence.size() != f.evidence.size() || a.cause != f.cause;
    a.severity = f.severity;
    a.cause = std::move(f.cause);
    a.callIds = std::move(f.callIds);
    a.instances = std::move(f.instances);
    a.digests = std::move(f.digests);
    a.summary = std::move(f.summary);
    a.evidence = std::move(f.evidence);
    a.since = f.since;
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
    const auto it = m_index.find(anomalyKey(kind, subject));
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
    return static_cast<std::size_t>(std::count_if(m_anomalies.begin(), m_anomalies.end(),
                                                  [](const Anomaly& a) { return a.open; }));
}

} // namespace callscope
