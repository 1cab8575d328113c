#include "sim_data.h"

#include "models/timestamp.h"
#include "sim/kafka_writer.h"

#include <pqxx/pqxx>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>
#include <stdexcept>

namespace callscope::test {
namespace {

std::string str(simdjson::ondemand::document& doc, const char* key) {
    std::string_view v;
    if (doc[key].get_string().get(v))
        return {};
    return std::string(v);
}

std::int64_t num(simdjson::ondemand::document& doc, const char* key) {
    std::int64_t v = 0;
    if (doc[key].get_int64().get(v))
        return -1;
    return v;
}

std::string join(std::vector<std::string> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::string out;
    for (const auto& id : ids)
        out += (out.empty() ? "" : ",") + id;
    return out;
}

bool terminalCaller(const std::string& s) {
    return s == "CONFIRMED_SUCCESS" || s == "CONFIRMED_FAILED";
}

} // namespace

std::vector<KafkaMessage> readWholeTopic(const std::string& brokers, const std::string& topic) {
    std::string err;
    KafkaSettings ks{brokers, {}, "murmur2_random"};
    auto reader = KafkaPartitionReader::create(ks, err);
    if (!reader || !reader->assignWholeTopic(topic, false, err))
        throw std::runtime_error("reading " + topic + ": " + err);
    // Up to each partition's end now (the simulator flushed before it
    // returned), not until the broker has been quiet a while: a busy shared
    // broker can be quiet for seconds before the first fetch.
    std::map<std::int32_t, std::int64_t> ends;
    if (!reader->endOffsets(topic, ends, err))
        throw std::runtime_error("reading " + topic + ": " + err);
    std::vector<KafkaMessage> all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!ends.empty()) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("reading " + topic + ": its end not reached in 120 s");
        for (auto& m : reader->poll(500, 10'000)) {
            if (const auto e = ends.find(m.partition); e != ends.end() && m.offset + 1 >= e->second)
                ends.erase(e);
            all.push_back(std::move(m));
        }
    }
    return all;
}

SimData loadSimData(const std::string& dsn, const std::string& brokers,
                    const std::string& receiptTopic, const std::string& callerTopic) {
    SimData d;
    pqxx::connection c(dsn);
    pqxx::work w(c);
    const auto ms = [](const char* col) {
        return std::string("(extract(epoch from ") + col + ") * 1000)::bigint";
    };
    for (const auto& row : w.exec(
             "SELECT call_id, request_digest, status, COALESCE(first_source, ''), lock_version, " +
             ms("created_at") + ", " + ms("updated_at") + ", " + ms("expire_at") +
             " FROM idempotent_record")) {
        RecordRow r{row[0].as<std::string>(),  row[1].as<std::string>(), row[2].as<std::string>(),
                    row[3].as<std::string>(),  row[4].as<int>(),         row[5].as<std::int64_t>(),
                    row[6].as<std::int64_t>(), row[7].as<std::int64_t>()};
        d.records[r.callId] = r;
    }
    for (const auto& row :
         w.exec("SELECT id, call_id, request_digest, source_instance, outcome, " +
                ms("arrived_at") + ", " + ms("finished_at") +
                ", COALESCE(trace_id, '') FROM idempotent_attempt ORDER BY arrived_at, id")) {
        AttemptRow a;
        a.id = row[0].as<std::int64_t>();
        a.callId = row[1].as<std::string>();
        a.digest = row[2].as<std::string>();
        a.source = row[3].as<std::string>();
        a.outcome = row[4].as<std::string>();
        a.arrivedAt = row[5].as<std::int64_t>();
        if (!row[6].is_null())
            a.finishedAt = row[6].as<std::int64_t>();
        a.traceId = row[7].as<std::string>();
        d.attempts[a.callId].push_back(a);
    }
    if (w.exec1("SELECT to_regclass('callscope_sim_orders') IS NOT NULL")[0].as<bool>())
        for (const auto& row : w.exec("SELECT order_no FROM callscope_sim_orders"))
            d.businessRows.insert(row[0].as<std::string>());
    simdjson::ondemand::parser parser;
    for (const auto& m : readWholeTopic(brokers, receiptTopic)) {
        simdjson::padded_string json(m.value);
        simdjson::ondemand::document doc;
        if (parser.iterate(json).get(doc))
            throw std::runtime_error("receipt is not JSON: " + m.value);
        ReceiptMsg r{str(doc, "callId"),         str(doc, "status"),  str(doc, "requestDigest"),
                     str(doc, "sourceInstance"), num(doc, "version"), m.partition};
        if (r.callId != m.key)
            throw std::runtime_error("receipt keyed " + m.key + " carries callId " + r.callId);
        d.receipts[r.callId].push_back(r);
        d.receiptCount++;
    }
    if (!callerTopic.empty()) {
        for (const auto& m : readWholeTopic(brokers, callerTopic)) {
            simdjson::padded_string json(m.value);
            simdjson::ondemand::document doc;
            if (parser.iterate(json).get(doc))
                throw std::runtime_error("caller event is not JSON: " + m.value);
            CallerEventMsg e{str(doc, "callId"), str(doc, "state"),         str(doc, "instance"),
                             str(doc, "bizNo"),  str(doc, "requestDigest"), str(doc, "traceId")};
            e.attempt = num(doc, "attempt");
            e.at = parseTimestamp(str(doc, "at")).value_or(-1);
            if (e.callId != m.key)
                throw std::runtime_error("caller event keyed " + m.key + " for " + e.callId);
            d.callerEvents[e.callId].push_back(e);
            d.callerEventCount++;
        }
    }
    return d;
}

Situations findSituations(const SimData& d) {
    Situations s;
    std::set<std::string> callIds;
    for (const auto& [id, _] : d.records)
        callIds.insert(id);
    for (const auto& [id, _] : d.attempts)
        callIds.insert(id);
    for (const auto& [id, _] : d.receipts)
        callIds.insert(id);
    for (const auto& [id, _] : d.callerEvents)
        callIds.insert(id);

    std::map<std::string, std::set<std::string>> byDigest, byBizNo;
    for (const auto& id : callIds) {
        const RecordRow* rec = d.records.count(id) ? &d.records.at(id) : nullptr;
        static const std::vector<AttemptRow> noAttempts;
        static const std::vector<ReceiptMsg> noReceipts;
        static const std::vector<CallerEventMsg> noEvents;
        const auto& atts = d.attempts.count(id) ? d.attempts.at(id) : noAttempts;
        const auto& recs = d.receipts.count(id) ? d.receipts.at(id) : noReceipts;
        const auto& evs = d.callerEvents.count(id) ? d.callerEvents.at(id) : noEvents;

        // stuck_processing: the record is still PROCESSING after the run drained.
        if (rec && rec->status == "PROCESSING")
            s["stuck_processing"].insert(id);

        // digest_conflict: two digests anywhere for one callId.
        std::set<std::string> digests;
        if (rec)
            digests.insert(rec->digest);
        for (const auto& a : atts)
            digests.insert(a.digest);
        for (const auto& e : evs)
            if (!e.digest.empty())
                digests.insert(e.digest);
        for (const auto& r : recs)
            if (!r.digest.empty())
                digests.insert(r.digest);
        if (digests.size() >= 2)
            s["digest_conflict"].insert(id);

        // duplicate_caller: two caller instances act on one callId; a
        // migration when each stopped unconfirmed before the next one's first act.
        std::set<std::string> instances;
        if (rec && !rec->firstSource.empty())
            instances.insert(rec->firstSource);
        struct Acts {
            std::int64_t first = INT64_MAX, last = INT64_MIN;
            bool confirmed = false;
        };
        std::map<std::string, Acts> acts;
        const auto act = [&](const std::string& inst, std::int64_t at, bool confirmed) {
            Acts& x = acts[inst];
            x.first = std::min(x.first, at);
            x.last = std::max(x.last, at);
            x.confirmed |= confirmed;
        };
        for (const auto& a : atts) {
            instances.insert(a.source);
            act(a.source, a.arrivedAt, false);
        }
        for (const auto& e : evs) {
            instances.insert(e.instance);
            act(e.instance, e.at, terminalCaller(e.state));
        }
        if (instances.size() >= 2) {
            std::vector<Acts> order;
            for (const auto& [_, x] : acts)
                order.push_back(x);
            std::sort(order.begin(), order.end(),
                      [](const Acts& a, const Acts& b) { return a.first < b.first; });
            bool migration = true;
            for (std::size_t k = 0; k + 1 < order.size(); ++k)
                migration &= !order[k].confirmed && order[k].last <= order[k + 1].first;
            s[migration ? "duplicate_caller/migration" : "duplicate_caller/concurrent"].insert(id);
        }

        // key_rotation (grouped below): the digest a call was made for.
        bool executed = false;
        for (const auto& a : atts)
            executed |= a.outcome == "EXECUTED" || a.outcome == "REOCCUPIED";
        const std::string ownDigest = rec ? rec->digest : (evs.empty() ? "" : evs.front().digest);
        if (!ownDigest.empty() && (executed || !evs.empty()))
            byDigest[ownDigest].insert(id);
        if (!evs.empty() && !evs.front().bizNo.empty())
            byBizNo[evs.front().bizNo].insert(id);

        // concurrent_execution: an execution starts while an earlier one of
        // the same callId is still running, and it is not a stale takeover.
        std::optional<std::int64_t> runningUntil; // end of the latest execution so far
        bool runningOpen = false;
        for (const auto& a : atts) {
            if (a.outcome != "EXECUTED" && a.outcome != "REOCCUPIED")
                continue;
            const bool overlaps = runningOpen || (runningUntil && a.arrivedAt < *runningUntil);
            if (overlaps && a.outcome == "EXECUTED")
                s["concurrent_execution"].insert(id);
            runningOpen = !a.finishedAt.has_value();
            runningUntil = a.finishedAt;
        }

        // expired_replay: a server execution older than the record itself
        // (an earlier incarnation), or a request after expire_at.
        if (rec) {
            for (const auto& a : atts)
                if (a.arrivedAt < rec->createdAt || a.arrivedAt > rec->expireAt)
                    s["expired_replay"].insert(id);
        }

        // receipt_missing / state_mismatch / receipt_regression on receipts.
        std::set<std::string> terminalReceipts;
        std::map<std::int64_t, std::set<std::string>> statusByVersion;
        for (const auto& r : recs) {
            if (r.status != "PROCESSING")
                terminalReceipts.insert(r.status);
            statusByVersion[r.version].insert(r.status);
        }
        if (rec && rec->status != "PROCESSING" && terminalReceipts.empty())
            s["receipt_missing"].insert(id);
        std::set<std::string> terminalViews = terminalReceipts;
        if (rec && rec->status != "PROCESSING")
            terminalViews.insert(rec->status);
        for (const auto& e : evs)
            if (terminalCaller(e.state))
                terminalViews.insert(e.state == "CONFIRMED_SUCCESS" ? "SUCCESS" : "FAILED");
        if (terminalViews.size() >= 2)
            s["state_mismatch"].insert(id);
        bool regression = false;
        for (const auto& [v, statuses] : statusByVersion)
            regression |= statuses.size() >= 2;
        bool seenTerminal = false, confirmedOrEscalated = false;
        for (const auto& e : evs) {
            if (seenTerminal && !terminalCaller(e.state))
                regression = true;
            seenTerminal |= terminalCaller(e.state);
            confirmedOrEscalated |= terminalCaller(e.state) || e.state == "ESCALATED";
        }
        if (regression)
            s["receipt_regression"].insert(id);

        // caller_stuck: left waiting with no confirmation or escalation.
        if (!evs.empty() && !confirmedOrEscalated &&
            (evs.back().state == "TIMEOUT_UNKNOWN" || evs.back().state == "AWAITING_RECEIPT"))
            s["caller_stuck"].insert(id);

        // orphan_receipt: a receipt for a callId the server never recorded.
        if (!recs.empty() && !rec && atts.empty())
            s["orphan_receipt"].insert(id);
    }
    // effect_missing: the record is SUCCESS, and the business row of the
    // bizNo its caller sent does not exist.
    for (const auto& [id, rec] : d.records) {
        if (rec.status != "SUCCESS" || !d.callerEvents.count(id))
            continue;
        const std::string& biz = d.callerEvents.at(id).front().bizNo;
        if (!biz.empty() && !d.businessRows.count(biz))
            s["effect_missing/effect_missing"].insert(id);
    }
    // callid_rewritten: one traceId at the caller under one callId and at the
    // server under another, each seen at one end only.
    std::map<std::string, std::set<std::string>> callerByTrace, serverByTrace;
    for (const auto& [id, evs] : d.callerEvents)
        for (const auto& e : evs)
            if (!e.traceId.empty())
                callerByTrace[e.traceId].insert(id);
    for (const auto& [id, atts] : d.attempts)
        for (const auto& a : atts)
            if (!a.traceId.empty())
                serverByTrace[a.traceId].insert(id);
    std::map<std::string, std::string> renamed; // caller's callId -> the server's
    for (const auto& [trace, callerIds] : callerByTrace) {
        if (!serverByTrace.count(trace))
            continue;
        for (const auto& c : callerIds)
            for (const auto& srv : serverByTrace.at(trace))
                if (c != srv && !d.attempts.count(c) && !d.records.count(c) &&
                    !d.callerEvents.count(srv)) {
                    s["callid_rewritten/callid_rewritten_in_transit"].insert(join({c, srv}));
                    renamed[c] = srv;
                }
    }
    // key_rotation, its cause told by the caller's timeouts.
    const auto firstAt = [&](const std::string& id) {
        std::int64_t t = INT64_MAX;
        if (d.records.count(id))
            t = std::min(t, d.records.at(id).createdAt);
        if (d.attempts.count(id))
            for (const auto& a : d.attempts.at(id))
                t = std::min(t, a.arrivedAt);
        if (d.callerEvents.count(id))
            for (const auto& e : d.callerEvents.at(id))
                t = std::min(t, e.at);
        return t;
    };
    const auto causeOf = [&](const std::set<std::string>& ids) -> std::string {
        std::vector<std::pair<std::int64_t, std::string>> order;
        bool events = false;
        for (const auto& id : ids) {
            order.emplace_back(firstAt(id), id);
            events |= d.callerEvents.count(id) != 0;
        }
        if (!events)
            return "unknown";
        std::sort(order.begin(), order.end());
        std::int64_t timeout = INT64_MAX;
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (k > 0 && timeout > order[k].first)
                return "callid_regenerated";
            if (d.callerEvents.count(order[k].second))
                for (const auto& e : d.callerEvents.at(order[k].second))
                    if (e.state == "TIMEOUT_UNKNOWN")
                        timeout = std::min(timeout, e.at);
        }
        return "key_rotated_after_timeout";
    };
    for (const auto* groups : {&byDigest, &byBizNo})
        for (const auto& [_, all] : *groups) {
            std::set<std::string> ids;
            for (const auto& id : all)
                if (!renamed.count(id) || !all.count(renamed.at(id)))
                    ids.insert(id);
            if (ids.size() >= 2)
                s["key_rotation/" + causeOf(ids)].insert(join({ids.begin(), ids.end()}));
        }
    return s;
}

Situations withoutCauses(const Situations& s) {
    Situations out;
    for (const auto& [key, sets] : s)
        out[key.substr(0, key.find('/'))].insert(sets.begin(), sets.end());
    return out;
}

Situations readAnomalyLines(const std::string& text, bool withCauses) {
    Situations s;
    simdjson::ondemand::parser parser;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty())
            continue;
        simdjson::padded_string json(line);
        simdjson::ondemand::document doc;
        if (parser.iterate(json).get(doc))
            throw std::runtime_error("not a JSON line: " + line);
        if (str(doc, "type") != "anomaly")
            continue;
        const std::string kind = str(doc, "kind");
        std::vector<std::string> ids;
        simdjson::ondemand::array arr;
        if (doc["callIds"].get_array().get(arr))
            throw std::runtime_error("no callIds in: " + line);
        for (auto v : arr) {
            std::string_view id;
            if (!v.get_string().get(id))
                ids.emplace_back(id);
        }
        const std::string cause = str(doc, "cause");
        s[cause.empty() || !withCauses ? kind : kind + "/" + cause].insert(join(ids));
    }
    return s;
}

std::string describe(const Situations& s) {
    std::string out;
    for (const auto& [kind, sets] : s) {
        out += kind + " (" + std::to_string(sets.size()) + "):";
        int n = 0;
        for (const auto& ids : sets) {
            if (++n > 5) {
                out += " ...";
                break;
            }
            out += " [" + ids + "]";
        }
        out += "\n";
    }
    return out.empty() ? "(none)\n" : out;
}

} // namespace callscope::test
