// The per-callId store: rows read again are applied once, and compaction keeps
// what it is told to along with its indexes.
#include "models/call_store.h"
#include "models/detectors/detector.h"
#include "models/frozen_calls.h"
#include "models/trace_index.h"
#include "tests/unit/detectors/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace callscope;
using namespace callscope::test;

namespace {

// A row of the attempt log (unfinished without `finished`).
AttemptObservation attemptRow(const std::string& callId, EpochMillis arrived,
                              EpochMillis finished = kNoTime,
                              const std::string& instance = "api-1") {
    AttemptObservation a;
    a.id = arrived;
    a.callId = callId;
    a.digest = D(1);
    a.sourceInstance = instance;
    a.arrivedAt = arrived;
    a.finishedAt = finished;
    return a;
}

} // namespace

TEST(CallStore, RereadRowsAreAppliedOnce) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1");
    const std::size_t events = s.store.events(0).size();
    s.record("c1", RecordStatus::Success, T0 + 2, T0 + 40); // the same row again
    s.attempt("c1", AttemptOutcome::Executed, T0 + 2, T0 + 40);
    EXPECT_EQ(s.store.events(0).size(), events);
    // An attempt first read unfinished gets its finish time, not a second event.
    s.attempt("c2", AttemptOutcome::Executed, T0, kNoTime);
    s.attempt("c2", AttemptOutcome::Executed, T0, T0 + 70);
    const std::uint32_t i2 = s.store.find("c2");
    ASSERT_EQ(s.store.events(i2).size(), 1u);
    EXPECT_EQ(s.store.timeOf(s.store.call(i2), s.store.events(i2)[0].aux), T0 + 70);
    // The same receipt message read again (a window re-read, a cold lookup of
    // a call in memory) is applied once; a redelivery (its own timestamp) is kept.
    const std::int64_t duplicates = s.store.counters().duplicateReceipts;
    s.receipt("c1", RecordStatus::Success, 2, T0 + 45);
    EXPECT_EQ(s.store.events(0).size(), events);
    EXPECT_EQ(s.store.counters().duplicateReceipts, duplicates);
    s.receipt("c1", RecordStatus::Success, 2, T0 + 60);
    EXPECT_EQ(s.store.events(0).size(), events + 1);
    EXPECT_EQ(s.store.counters().duplicateReceipts, duplicates + 1);
}

TEST(CallStore, CompactionKeepsWhatItIsToldAndItsIndexes) {
    Scenario s;
    s.healthy("c1", T0, D(1), "B1").healthy("c2", T0, D(2), "B2").healthy("c3", T0, D(2), "B3");
    const auto map = s.store.compact([](std::uint32_t i) { return i != 0; });
    EXPECT_EQ(map[0], CallStore::npos);
    EXPECT_EQ(s.store.size(), 2u);
    EXPECT_EQ(s.store.find("c1"), CallStore::npos);
    const std::uint32_t c3 = s.store.find("c3");
    ASSERT_NE(c3, CallStore::npos);
    EXPECT_EQ(s.store.digest(s.store.call(c3).digest), D(2));
    EXPECT_EQ(s.store.callsWithDigest(s.store.call(c3).digest).size(), 2u);
    EXPECT_EQ(s.store.instance(s.store.events(c3).front().instance), "api-1");
    EXPECT_EQ(s.store.events(c3).size(), 8u);
}

// While a window loads (room kept for as many calls as before), compaction
// keeps each kept call's events, of every block size, and the calls that
// follow take none of them.
TEST(CallStore, CompactionWhileLoadingKeepsEveryKeptCallsEvents) {
    CallStore store;
    store.startFreezing();
    const auto fill = [&](int from, int to) {
        for (int k = from; k < to; ++k) {
            const std::string id = "c" + std::to_string(k);
            for (int n = 0; n <= k % 9; ++n) // 1 to 9 events: blocks of every size
                store.add(attemptRow(id, T0 + k + n, kNoTime, "api-" + std::to_string(n)));
        }
    };
    const auto timesOf = [&](const std::string& id) {
        std::vector<EpochMillis> out;
        const std::uint32_t i = store.find(id);
        for (const CallEvent& e : store.events(i))
            out.push_back(store.timeOf(store.call(i), e.dt));
        return out;
    };
    fill(0, 300);
    std::vector<std::vector<EpochMillis>> before;
    for (int k = 0; k < 300; k += 2)
        before.push_back(timesOf("c" + std::to_string(k)));
    // The even ones stay, and every third odd one.
    store.compact([&](std::uint32_t i) {
        const int k = std::stoi(store.callId(i).substr(1));
        return k % 2 == 0 || k % 3 == 0;
    });
    EXPECT_EQ(store.size(), 200u);
    fill(300, 600);
    for (int k = 0, n = 0; k < 300; k += 2, ++n)
        EXPECT_EQ(timesOf("c" + std::to_string(k)), before[static_cast<std::size_t>(n)]) << k;
    for (int k = 300; k < 600; ++k)
        EXPECT_EQ(store.events(store.find("c" + std::to_string(k))).size(),
                  static_cast<std::size_t>(k % 9 + 1));
}

// The trace index follows compactions in place: every traceId of a kept call
// is found under its new index, none of a call gone, through tables with
// long runs of neighbours and with wrap-around.
TEST(TraceIndex, RemapKeepsEveryKeyOfTheCallsLeftFindable) {
    for (int round = 0; round < 20; ++round) {
        TraceIndex index;
        std::mt19937 rng(static_cast<unsigned>(round));
        const int n = 100 + round * 37;
        for (int k = 0; k < n; ++k)
            index.note("trace-" + std::to_string(round) + "-" + std::to_string(k),
                       static_cast<std::uint32_t>(k));
        std::vector<std::uint32_t> map(static_cast<std::size_t>(n), TraceIndex::kNone);
        std::uint32_t next = 0;
        for (auto& m : map)
            if (rng() % 3 != 0)
                m = next++;
        index.remap(map);
        EXPECT_EQ(index.size(), next);
        for (int k = 0; k < n; ++k) {
            const std::string id = "trace-" + std::to_string(round) + "-" + std::to_string(k);
            const std::uint32_t at = map[static_cast<std::size_t>(k)];
            // Another call with it: the first carrier is told when there is one.
            EXPECT_EQ(index.note(id, 1'000'000), at) << id;
        }
    }
}

namespace {

// Freezes every call the predicate names and lets them leave the store.
void freezeAndCompact(CallStore& store, const std::function<bool(const std::string&)>& leaves) {
    std::vector<std::uint8_t> leaving(store.size(), 0);
    for (std::uint32_t i = 0; i < store.size(); ++i)
        if (leaves(store.callId(i)) && store.freeze(i, firstEventAt(store, i)))
            leaving[i] = 1;
    store.compact([&](std::uint32_t i) { return !leaving[i]; });
}

// A freezing store whose `n` calls ("call-K", digest D(K), `step` ms apart)
// have all left, frozen.
CallStore allFrozen(int n, EpochMillis step) {
    CallStore store;
    store.startFreezing();
    for (int k = 0; k < n; ++k)
        store.add(RecordObservation{"call-" + std::to_string(k), D(k), RecordStatus::Success,
                                    "api-1", 0, T0 + k * step, T0 + k * step + 40, kNoTime});
    freezeAndCompact(store, [](const std::string&) { return true; });
    return store;
}

} // namespace

TEST(CallStore, AFrozenCallComesBackWholeWithItsCallIdDigestOrBizNo) {
    Scenario s;
    s.store.startFreezing();
    s.healthy("a", T0, D(7), "B7", "api-3");
    s.healthy("b", T0 + 1000, D(8), "B8", "api-4");
    s.healthy("c", T0 + 2000, D(9), "B9");
    const auto eventsOf = [&](const std::string& id) {
        const std::uint32_t i = s.store.find(id);
        std::vector<std::tuple<int, int, int, std::string>> out;
        for (const CallEvent& e : s.store.events(i))
            out.emplace_back(e.dt, static_cast<int>(e.type), e.aux, s.store.instance(e.instance));
        return out;
    };
    const auto before = eventsOf("a");
    const CallState stateA = s.store.call(s.store.find("a"));
    freezeAndCompact(s.store, [](const std::string& id) { return id != "c"; });
    EXPECT_EQ(s.store.size(), 1u);
    EXPECT_EQ(s.store.frozenCount(), 2u);
    EXPECT_EQ(s.store.find("a"), CallStore::npos);

    // A call with a's digest brings a back: its events, times and instances
    // as they were (instance ids stay while calls freeze), its keys indexed.
    s.record("a2", RecordStatus::Success, T0 + 5000, T0 + 5040, D(7));
    EXPECT_EQ(s.store.find("a"), CallStore::npos); // (not before a judgement asks)
    s.store.thawSiblings();
    ASSERT_NE(s.store.find("a"), CallStore::npos);
    EXPECT_EQ(eventsOf("a"), before);
    const CallState& a = s.store.call(s.store.find("a"));
    EXPECT_EQ(a.baseSec, stateA.baseSec);
    EXPECT_EQ(a.record, stateA.record);
    EXPECT_TRUE(a.flags & Reported);
    EXPECT_EQ(s.store.digest(a.digest), D(7));
    EXPECT_EQ(s.store.bizNo(a.bizNo), "B7");
    EXPECT_EQ(s.store.callsWithDigestCount(a.digest), 2u);
    EXPECT_EQ(s.store.frozenCount(), 1u);

    // b's bizNo under a caller's new callId brings b back too.
    s.caller("b2", CallerState::Initiated, T0 + 6000, 0, "api-4", "B8", D(80));
    s.store.thawSiblings();
    ASSERT_NE(s.store.find("b"), CallStore::npos);
    EXPECT_EQ(s.store.findByBizNo("B8").size(), 2u);
    EXPECT_EQ(s.store.frozenCount(), 0u);

    // A late receipt of a frozen call: the call comes back and takes it.
    freezeAndCompact(s.store, [](const std::string& id) { return id == "c"; });
    ASSERT_EQ(s.store.find("c"), CallStore::npos);
    s.receipt("c", RecordStatus::Success, 2, T0 + 2045 + 3'600'000, D(9));
    const std::uint32_t c = s.store.find("c");
    ASSERT_NE(c, CallStore::npos);
    EXPECT_EQ(s.store.call(c).baseSec, (T0 + 2000) / 1000);
    EXPECT_TRUE(s.store.call(c).hasRecord());
    EXPECT_TRUE(s.store.events(c).back().flags & DuplicateReceipt);
    s.store.stopFreezing();
    EXPECT_EQ(s.store.frozenCount(), 0u);
}

// A frozen call is packed (varints, times after the event before): it comes
// back with every field of its state and events as they were, extremes
// included, and its texts as given.
TEST(FrozenCalls, PackedCallsComeBackExactly) {
    CallState st;
    st.baseSec = UINT32_MAX;
    st.digest = 7; // (ids and handles are the store's to set again)
    st.bizNo = 9;
    st.firstSource = kMaxInstanceId;
    st.created = kNoDt;
    st.updated = -5;
    st.expireSec = INT32_MAX;
    st.record = 3;
    st.caller = 7;
    st.flags = 0xff;
    st.lockVersion = UINT16_MAX;
    std::vector<CallEvent> events;
    const std::int32_t dts[] = {0, 1, -40, INT32_MAX, INT32_MIN + 1, 310, 310, -1};
    for (int k = 0; k < 64; ++k) {
        const std::int32_t aux = k % 4 == 0 ? kNoDt : k % 4 == 1 ? INT32_MAX : k * 37 - 500;
        events.push_back(makeEvent(
            dts[k % 8], static_cast<EventType>(k % 4), static_cast<std::uint8_t>(k % 8),
            static_cast<std::uint8_t>(k % 3 == 0 ? 1 : k % 32), static_cast<std::uint8_t>(k % 4),
            k % 5 == 0 ? kMaxInstanceId : static_cast<std::uint32_t>(k), aux));
    }
    FrozenCalls frozen;
    FrozenCalls::Entry in;
    in.callId = "cid-packed-1";
    in.digest = std::string(32, '\xab');
    in.bizNo = "ORD-1";
    const std::string longDigest(300, 'x');
    in.extraDigests = {"d2", longDigest};
    in.state = st;
    in.events = events;
    for (int k = 0; k < 3; ++k) { // (and a few others around it)
        FrozenCalls::Entry other = in;
        other.callId = "other-" + std::to_string(k);
        other.events = std::span<const CallEvent>(events).first(static_cast<std::size_t>(k));
        ASSERT_TRUE(frozen.add(other, T0));
        if (k == 1) {
            ASSERT_TRUE(frozen.add(in, T0));
        }
    }
    std::vector<std::uint64_t> found;
    ASSERT_TRUE(frozen.find(FrozenCalls::Key::CallId, "cid-packed-1", found));
    ASSERT_EQ(found.size(), 1u);
    const FrozenCalls::Entry out = frozen.read(found[0]);
    EXPECT_EQ(out.callId, "cid-packed-1");
    EXPECT_EQ(out.digest, in.digest);
    EXPECT_EQ(out.bizNo, "ORD-1");
    ASSERT_EQ(out.extraDigests.size(), 2u);
    EXPECT_EQ(out.extraDigests[1], longDigest);
    EXPECT_EQ(out.state.baseSec, st.baseSec);
    EXPECT_EQ(out.state.firstSource, st.firstSource);
    EXPECT_EQ(out.state.created, st.created);
    EXPECT_EQ(out.state.updated, st.updated);
    EXPECT_EQ(out.state.expireSec, st.expireSec);
    EXPECT_EQ(out.state.record, st.record);
    EXPECT_EQ(out.state.caller, st.caller);
    EXPECT_EQ(out.state.flags, st.flags);
    EXPECT_EQ(out.state.lockVersion, st.lockVersion);
    EXPECT_EQ(out.state.eventCount, events.size());
    ASSERT_EQ(out.events.size(), events.size());
    for (std::size_t k = 0; k < events.size(); ++k) {
        const CallEvent &a = events[k], &b = out.events[k];
        EXPECT_EQ(
            std::make_tuple(a.dt, a.aux, std::uint32_t{a.instance}, std::uint32_t{a.digestSlot},
                            std::uint32_t{a.flags}, std::uint32_t{a.code}, a.type),
            std::make_tuple(b.dt, b.aux, std::uint32_t{b.instance}, std::uint32_t{b.digestSlot},
                            std::uint32_t{b.flags}, std::uint32_t{b.code}, b.type))
            << "event " << k;
    }
    found.clear();
    ASSERT_TRUE(frozen.find(FrozenCalls::Key::BizNo, "ORD-1", found));
    EXPECT_EQ(found.size(), 4u);
    for (const std::uint64_t at : found) { // the others: none, one, two of the events
        const FrozenCalls::Entry e = frozen.read(at);
        EXPECT_EQ(e.bizNo, "ORD-1");
        if (e.callId == "cid-packed-1")
            continue;
        const std::size_t n = static_cast<std::size_t>(e.callId.back() - '0');
        ASSERT_EQ(e.events.size(), n) << e.callId;
        ASSERT_EQ(e.state.eventCount, n);
        for (std::size_t k = 0; k < n; ++k)
            EXPECT_EQ(std::make_tuple(e.events[k].dt, e.events[k].aux),
                      std::make_tuple(events[k].dt, events[k].aux));
    }
}

// The index of frozen calls is rebuilt from the keys it keeps: one that
// grows is half full after, and one whose entries were nearly all
// thawed shrinks to what is left (thawed keys stay until then: were they
// kept, each pass would rebuild a table as large), still finding them.
TEST(FrozenCalls, TheIndexShrinksToTheEntriesLeftAndFindsThem) {
    FrozenCalls frozen;
    FrozenCalls::Entry e;
    std::vector<std::string> ids, bizNos;
    for (int k = 0; k < 3000; ++k) {
        ids.push_back("frozen-call-" + std::to_string(k));
        bizNos.push_back("ORD-" + std::to_string(k));
    }
    for (int k = 0; k < 3000; ++k) {
        e.callId = ids[k];
        e.bizNo = bizNos[k];
        e.digest = std::string_view(ids[k]); // (a digest each)
        ASSERT_TRUE(frozen.add(e, T0 + k));
    }
    std::vector<std::uint64_t> found;
    std::vector<std::uint64_t> at(3000);
    for (int k = 0; k < 3000; ++k) {
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::CallId, ids[k], found));
        ASSERT_EQ(found.size(), 1u) << k;
        at[k] = found[0];
    }
    for (int k = 10; k < 3000; ++k)
        frozen.remove(at[k]);
    EXPECT_EQ(frozen.size(), 10u);
    const std::size_t before = frozen.memoryBytes();
    frozen.dropBefore(T0 - 1); // (nothing has passed: the index shrinks only)
    const std::size_t after = frozen.memoryBytes();
    // 9,000 keys' slots (a table at most three quarters full: 12,000 slots
    // of 8 bytes at least) down to 1,024.
    EXPECT_LE(after + (12'000 - 1024) * 8, before) << before << " -> " << after;
    frozen.dropBefore(T0 - 1);
    EXPECT_EQ(frozen.memoryBytes(), after) << "rebuilt again as large";
    for (int k = 0; k < 10; ++k) {
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::BizNo, bizNos[k], found));
        EXPECT_EQ(found.size(), 1u) << k;
    }
    found.clear();
    ASSERT_TRUE(frozen.find(FrozenCalls::Key::CallId, ids[2999], found));
    EXPECT_TRUE(found.empty());
}

// Full blocks are compressed: frozen calls take well under their packed
// size, and each comes back exactly from whichever block, read in any order
// (the block decompressed last is kept), after others were taken back, and
// after every block had been forgotten and more were added.
TEST(FrozenCalls, CompressedBlocksGiveEveryCallBackExactly) {
    FrozenCalls frozen;
    std::mt19937_64 rng(3);
    constexpr int n = 30'000;
    std::vector<std::string> ids, digests, bizNos;
    std::vector<std::vector<CallEvent>> events(n);
    std::vector<CallState> states(n);
    for (int k = 0; k < n; ++k) {
        ids.push_back("cid-20240520-" + std::to_string(1'000'000 + k));
        std::string d(32, '\0'); // (a packed SHA-256: 32 bytes that do not compress)
        for (char& c : d)
            c = static_cast<char>(rng());
        digests.push_back(std::move(d));
        bizNos.push_back("ORD-" + std::to_string(5'000'000 + k));
        for (int e = 0; e < 6; ++e)
            events[k].push_back(makeEvent(e * 100 + k % 97, static_cast<EventType>(e % 4),
                                          static_cast<std::uint8_t>(e % 3), 1, 0,
                                          static_cast<std::uint32_t>(1 + k % 16), e));
        states[k].baseSec = static_cast<std::uint32_t>(T0 / 1000 + k);
        states[k].record = 2;
        states[k].created = k % 7;
    }
    const auto add = [&](int k) {
        FrozenCalls::Entry e;
        e.callId = ids[k];
        e.digest = digests[k];
        e.bizNo = bizNos[k];
        e.state = states[k];
        e.events = events[k];
        ASSERT_TRUE(frozen.add(e, T0 + std::int64_t{k} * 1000));
    };
    const auto expectBack = [&](int k, std::uint64_t at) {
        const FrozenCalls::Entry e = frozen.read(at);
        ASSERT_EQ(e.callId, ids[k]);
        EXPECT_EQ(e.digest, digests[k]);
        EXPECT_EQ(e.bizNo, bizNos[k]);
        EXPECT_EQ(e.state.baseSec, states[k].baseSec);
        EXPECT_EQ(e.state.created, states[k].created);
        ASSERT_EQ(e.events.size(), events[k].size());
        for (std::size_t x = 0; x < e.events.size(); ++x)
            EXPECT_EQ(std::make_tuple(e.events[x].dt, e.events[x].aux,
                                      std::uint32_t{e.events[x].instance}),
                      std::make_tuple(events[k][x].dt, events[k][x].aux,
                                      std::uint32_t{events[k][x].instance}));
    };
    for (int k = 0; k < n / 3; ++k)
        add(k);
    const std::size_t third = frozen.memoryBytes();
    for (int k = n / 3; k < n; ++k)
        add(k);
    // Packed, each of these takes about 100 bytes, its three keys and its
    // place 40 to 60 more: compressed, their 32-byte digests dominate.
    const double each = double(frozen.memoryBytes() - third) / (n - n / 3);
    EXPECT_LT(each, 120.0);
    std::vector<std::uint64_t> at(n);
    std::vector<std::uint64_t> found;
    for (int k = 0; k < n; ++k) {
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::CallId, ids[k], found));
        ASSERT_EQ(found.size(), 1u) << k;
        at[k] = found[0];
    }
    std::vector<int> order(n);
    for (int k = 0; k < n; ++k)
        order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (int x = 0; x < 2000; ++x)
        expectBack(order[x], at[order[x]]);
    for (int x = 0; x < 1000; ++x)
        frozen.remove(at[order[x]]);
    EXPECT_EQ(frozen.size(), std::size_t(n - 1000));
    for (int x = 0; x < 1000; ++x) {
        EXPECT_TRUE(frozen.callIdOf(at[order[x]]).empty());
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::Digest, digests[order[x]], found));
        EXPECT_TRUE(found.empty());
    }
    for (int x = 1000; x < 3000; ++x) {
        const int k = order[x];
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::BizNo, bizNos[k], found));
        ASSERT_EQ(found.size(), 1u) << k;
        expectBack(k, found[0]);
    }
    frozen.dropBefore(T0 + std::int64_t{n} * 1000); // every block, the last one too
    EXPECT_EQ(frozen.size(), 0u);
    for (int k = 0; k < 10; ++k)
        add(k);
    for (int k = 0; k < 10; ++k) {
        found.clear();
        ASSERT_TRUE(frozen.find(FrozenCalls::Key::Digest, digests[k], found));
        ASSERT_EQ(found.size(), 1u) << k;
        expectBack(k, found[0]);
    }
}

TEST(CallStore, FrozenCallsLeaveWhenTheWindowHasPassedThem) {
    // Enough calls, a second apart, to fill many blocks (a frozen call of
    // one event takes about 70 bytes: about 900 to a block).
    constexpr int n = 60000;
    CallStore store = allFrozen(n, 1000);
    EXPECT_EQ(store.frozenCount(), std::size_t{n});
    store.dropFrozenBefore(T0);
    EXPECT_EQ(store.frozenCount(), std::size_t{n});
    // Whole blocks go, oldest first (the last holds calls not yet past).
    store.dropFrozenBefore(T0 + n * 3 / 4 * 1000);
    EXPECT_LT(store.frozenCount(), std::size_t{n});
    EXPECT_GT(store.frozenCount(), 0u);
    const std::size_t left = store.frozenCount();
    // A call whose block went is not brought back; a younger one is.
    store.add(RecordObservation{"new-0", D(0), RecordStatus::Success, "api-1", 0, T0 + 7'000'000,
                                T0 + 7'000'040, kNoTime});
    store.thawSiblings();
    EXPECT_EQ(store.find("call-0"), CallStore::npos);
    store.add(RecordObservation{"new-last", D(n - 1), RecordStatus::Success, "api-1", 0,
                                T0 + 7'000'000, T0 + 7'000'040, kNoTime});
    store.thawSiblings();
    EXPECT_NE(store.find("call-" + std::to_string(n - 1)), CallStore::npos);
    EXPECT_EQ(store.frozenCount(), left - 1);
}

// Live, frozen calls count toward max_calls and the memory budget: the
// oldest go first, a block at a time, until both hold (issue 12). The
// dashboard reads them in place; a search by callId or bizNo thaws them.
TEST(CallStore, FrozenCallsAreForgottenOldestFirstAndFoundByName) {
    constexpr int n = 60000;
    CallStore store = allFrozen(n, 1000);
    EXPECT_EQ(store.dropFrozenOldest(SIZE_MAX, SIZE_MAX), 0u);
    std::size_t visited = 0;
    EpochMillis first = kNoTime;
    std::string firstId;
    store.forEachFrozen(
        [&](std::string_view callId, const CallState& c, std::span<const CallEvent> events) {
            if (first == kNoTime)
                firstId = callId;
            first = first == kNoTime ? c.base() : first;
            visited += events.size() == 1;
        });
    EXPECT_EQ(firstId, "call-0");
    EXPECT_EQ(visited, std::size_t{n});
    EXPECT_EQ(first / 1000, T0 / 1000);

    // By count: whole blocks, oldest first, at most one more than needed.
    const std::size_t went = store.dropFrozenOldest(n / 2, SIZE_MAX);
    EXPECT_EQ(store.frozenCount(), std::size_t{n} - went);
    EXPECT_LE(store.frozenCount(), std::size_t{n / 2});
    EXPECT_GT(store.frozenCount(), std::size_t{n / 2 - 2000});
    std::size_t limited = 0;
    store.forEachFrozen(
        [&](std::string_view, const CallState& c, std::span<const CallEvent>) {
            ++limited;
            EXPECT_GE(c.base(), T0 + static_cast<EpochMillis>(went) * 1000 - 1000);
        },
        3);
    EXPECT_EQ(limited, 3u);
    // By bytes.
    const std::size_t half = store.frozenBytes() / 2;
    store.dropFrozenOldest(SIZE_MAX, half);
    EXPECT_LE(store.frozenBytes(), half);
    EXPECT_GT(store.frozenCount(), 0u);

    // A drill-down names a call: it comes back whole, unless it went.
    EXPECT_EQ(store.thawNamed("call-0"), CallStore::npos);
    const std::uint32_t last = store.thawNamed("call-" + std::to_string(n - 1));
    ASSERT_NE(last, CallStore::npos);
    EXPECT_EQ(store.callId(last), "call-" + std::to_string(n - 1));
    EXPECT_EQ(store.call(last).recordStatus(), RecordStatus::Success);
    EXPECT_EQ(store.digest(store.call(last).digest), D(n - 1));
    EXPECT_EQ(store.size(), 1u);
}

// A search by bizNo brings back every frozen call made for it, and their
// key-rotation siblings.
TEST(CallStore, ASearchByBizNoThawsItsCalls) {
    Scenario s;
    s.store.startFreezing();
    s.healthy("a", T0, D(7), "B7", "api-3");
    s.healthy("a-again", T0 + 1000, D(7), "B70", "api-3");
    s.healthy("b", T0 + 2000, D(8), "B8", "api-4");
    freezeAndCompact(s.store, [](const std::string&) { return true; });
    ASSERT_EQ(s.store.frozenCount(), 3u);
    EXPECT_EQ(s.store.thawNamed("B7"), CallStore::npos); // (a bizNo, not a callId)
    EXPECT_NE(s.store.find("a"), CallStore::npos);
    EXPECT_NE(s.store.find("a-again"), CallStore::npos); // a's digest
    EXPECT_EQ(s.store.find("b"), CallStore::npos);
    EXPECT_EQ(s.store.findByBizNo("B7").size(), 1u);
    EXPECT_EQ(s.store.frozenCount(), 1u);
    EXPECT_EQ(s.store.thawNamed("nothing"), CallStore::npos);
    EXPECT_EQ(s.store.frozenCount(), 1u);
}

// Live, the record feed reads the last clock_skew again every 30 s: a row
// read again as it was leaves its packed call packed (it came back, and was
// packed again, each time); a row that changed brings it back.
TEST(CallStore, ARowReadAgainUnchangedLeavesItsPackedCallPacked) {
    CallStore store;
    store.startFreezing(true);
    const RecordObservation row{"a", D(1),    RecordStatus::Success, "api-1", 1,
                                T0,  T0 + 40, T0 + 86'400'000};
    const AttemptObservation attempt = attemptRow("a", T0);
    store.add(attempt);
    store.add(row);
    freezeAndCompact(store, [](const std::string&) { return true; });
    ASSERT_EQ(store.frozenCount(), 1u);
    const std::int64_t unchanged = store.counters().unchangedRows;
    ObservationBatch again;
    again.records.push_back(row);
    RecordObservation older = row; // an older state read late
    older.status = RecordStatus::Processing;
    older.updatedAt = T0 + 1;
    older.lockVersion = 0;
    again.records.push_back(older);
    again.attempts.push_back(attempt); // (its attempt, read again with it)
    EXPECT_TRUE(store.apply(again).empty());
    EXPECT_EQ(store.size(), 0u);
    EXPECT_EQ(store.frozenCount(), 1u);
    EXPECT_EQ(store.counters().unchangedRows, unchanged + 3);
    RecordObservation changed = row;
    changed.updatedAt = T0 + 90'000;
    changed.lockVersion = 2;
    changed.status = RecordStatus::Failed;
    const std::uint32_t i = store.add(changed);
    ASSERT_NE(i, CallStore::npos);
    EXPECT_EQ(store.callId(i), "a");
    EXPECT_EQ(store.call(i).recordStatus(), RecordStatus::Failed);
    EXPECT_EQ(store.frozenCount(), 0u);
}

// Live, a call that left whole memory (evicted, or packed and then
// forgotten) while the record feed may still read its row again leaves a
// tomb: its row read again does not make it anew with its receipt missing
// (bench/soak: thousands of false receipt_missing a minute). A changed row
// still does; rows the feed reads no more (past its look-back of the latest
// row) leave no tomb.
TEST(CallStore, ARowReadAgainOfACallGoneDoesNotMakeItAnew) {
    CallStore store;
    store.startFreezing(true);
    store.setRereadSpan(5 * MIN);
    const auto row = [](const std::string& id, EpochMillis t) {
        return RecordObservation{id, D(1),   RecordStatus::Success, "api-1", 1,
                                 t,  t + 40, t + 86'400'000};
    };
    const auto attempt = [](const std::string& id, EpochMillis t) {
        return attemptRow(id, t, t + 30);
    };
    store.add(attempt("gone", T0));
    store.add(row("gone", T0));
    store.add(attempt("gone", T0 + 100)); // a retry answered from the record
    store.add(attempt("packed", T0 + 1000));
    store.add(row("packed", T0 + 1000));
    freezeAndCompact(store, [](const std::string& id) { return id == "packed"; });
    store.compact([](std::uint32_t) { return false; }); // "gone" evicted
    ASSERT_EQ(store.size(), 0u);
    ASSERT_EQ(store.frozenCount(), 1u);
    store.dropFrozenOldest(0, SIZE_MAX); // "packed" forgotten
    ASSERT_EQ(store.frozenCount(), 0u);
    const std::int64_t unchanged = store.counters().unchangedRows;
    // The attempt log is read again too: an attempt that made the call anew
    // let the row read after it join the call rather than its tomb.
    ObservationBatch attempts, records;
    attempts.attempts.push_back(attempt("gone", T0));
    attempts.attempts.push_back(attempt("gone", T0 + 100));
    attempts.attempts.push_back(attempt("packed", T0 + 1000));
    records.records.push_back(row("gone", T0));
    records.records.push_back(row("packed", T0 + 1000));
    EXPECT_TRUE(store.apply(attempts).empty());
    EXPECT_TRUE(store.apply(records).empty());
    EXPECT_EQ(store.size(), 0u);
    EXPECT_EQ(store.counters().unchangedRows, unchanged + 5);
    // An attempt the call did not have is new: one after the latest it had
    // (a replay since), or one as early from another instance (a writer's
    // clock behind, a late commit).
    const AttemptObservation elsewhere = attemptRow("gone", T0 + 50, T0 + 80, "api-2");
    ASSERT_EQ(AttemptPrint::bitOf(T0 + 50, 2, 0) &
                  (AttemptPrint::bitOf(T0, 1, 0) | AttemptPrint::bitOf(T0 + 100, 1, 0)),
              0u)
        << "(the test's attempts share a bit)";
    ASSERT_NE(store.add(elsewhere), CallStore::npos);
    store.compact([](std::uint32_t) { return false; });
    ASSERT_NE(store.add(attempt("packed", T0 + 60'000)), CallStore::npos);
    EXPECT_EQ(store.size(), 1u);
    RecordObservation changed = row("gone", T0);
    changed.updatedAt = T0 + 5000;
    changed.lockVersion = 2;
    ASSERT_NE(store.add(changed), CallStore::npos);
    EXPECT_EQ(store.size(), 2u);

    // Rows far later: the feed no longer reads the old ones again, and
    // their tombs go with the next compaction.
    store.add(row("later", T0 + 20 * MIN));
    store.compact([](std::uint32_t) { return false; });
    ASSERT_NE(store.add(row("packed", T0 + 1000)), CallStore::npos);
}

// Live, an attempt still running when its call was packed is read again
// until it finishes (by its id): read again as it was, the call stays
// packed; finished, the call comes back with the finish.
TEST(CallStore, AnAttemptThatFinishesAfterItsCallWasPackedBringsItBack) {
    CallStore store;
    store.startFreezing(true);
    store.setRereadSpan(5 * MIN);
    const AttemptObservation open = attemptRow("p", T0);
    store.add(open);
    store.add(RecordObservation{"p", D(1), RecordStatus::Success, "api-1", 1, T0, T0 + 40,
                                T0 + 86'400'000});
    freezeAndCompact(store, [](const std::string&) { return true; });
    ASSERT_EQ(store.frozenCount(), 1u);
    EXPECT_EQ(store.add(open), CallStore::npos);
    EXPECT_EQ(store.frozenCount(), 1u);
    AttemptObservation finished = open;
    finished.finishedAt = T0 + 900;
    const std::uint32_t i = store.add(finished);
    ASSERT_NE(i, CallStore::npos);
    EXPECT_EQ(store.frozenCount(), 0u);
    const auto ev = store.events(i);
    const auto a = std::find_if(ev.begin(), ev.end(),
                                [](const CallEvent& e) { return e.type == EventType::Attempt; });
    ASSERT_NE(a, ev.end());
    EXPECT_EQ(std::count_if(ev.begin(), ev.end(),
                            [](const CallEvent& e) { return e.type == EventType::Attempt; }),
              1);
    EXPECT_EQ(store.timeOf(store.call(i), a->aux), T0 + 900);
}

TEST(CallStore, AKeyManyFrozenCallsShareIsAPlaceholderNotThawed) {
    CallStore store;
    store.startFreezing();
    // 1,500 calls of one bizNo ("N/A"), each with its own digest.
    for (int k = 0; k < 1500; ++k) {
        CallerObservation o;
        o.callId = "na-" + std::to_string(k);
        o.state = CallerState::ConfirmedSuccess;
        o.at = T0 + k;
        o.instance = "api-1";
        o.bizNo = "N/A";
        o.digest = D(k);
        store.add(o);
    }
    freezeAndCompact(store, [](const std::string&) { return true; });
    CallerObservation two;
    two.state = CallerState::Initiated;
    two.at = T0 + 5000;
    two.instance = "api-1";
    two.bizNo = "N/A";
    for (const char* id : {"next-1", "next-2"}) {
        two.callId = id;
        store.add(two);
    }
    store.thawSiblings();
    // Nothing came back, and the two that share it now count as many.
    EXPECT_EQ(store.size(), 2u);
    EXPECT_EQ(store.frozenCount(), 1500u);
    const std::uint32_t b = store.call(0).bizNo;
    EXPECT_GT(store.callsWithBizNoCount(b), FrozenCalls::kMaxGroup);
}

TEST(CallStore, FrozenCallsThawedByTheThousandLeaveTheIndexWhole) {
    constexpr int n = 3000;
    CallStore store = allFrozen(n, 1);
    // Late receipts bring all but ten back (their slots stay, stale).
    for (int k = 10; k < n; ++k) {
        ReceiptObservation r;
        r.callId = "call-" + std::to_string(k);
        r.status = RecordStatus::Success;
        r.origin.kafkaTimestamp = T0 + 3'600'000;
        store.add(r);
    }
    EXPECT_EQ(store.frozenCount(), 10u);
    // The index shrinks to what is left, and still finds it.
    store.dropFrozenBefore(T0 - 1);
    store.add(RecordObservation{"late-0", D(0), RecordStatus::Success, "api-1", 0, T0 + 7'000'000,
                                T0 + 7'000'040, kNoTime});
    store.thawSiblings();
    EXPECT_NE(store.find("call-0"), CallStore::npos);
    EXPECT_EQ(store.frozenCount(), 9u);
}

// Digests are packed 16 hex digits at a time: exactly the 64-digit lower-case
// ones pack, and every text comes back as written.
TEST(Interner, OnlyLowerCaseHexDigestsPackAndEveryTextComesBackAsWritten) {
    Interner digests(true);
    std::uint64_t seed = 12345;
    const auto next = [&] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; };
    const char* hex = "0123456789abcdef";
    for (int round = 0; round < 200; ++round) {
        std::string d(64, '0');
        for (char& c : d)
            c = hex[(next() >> 33) & 15];
        const std::uint32_t id = digests.intern(d);
        EXPECT_EQ(digests.storedForm(id).size(), 33u) << d;
        EXPECT_EQ(digests.text(id), d);
        EXPECT_TRUE(digests.equals(id, d));
        // One digit off anywhere, or one character that is not a lower-case
        // hex digit: another text, kept as written.
        const std::size_t at = (next() >> 33) % 64;
        std::string other = d;
        other[at] = other[at] == 'f' ? '0' : hex[std::string_view(hex).find(other[at]) + 1];
        EXPECT_FALSE(digests.equals(id, other)) << other;
        for (const char bad : {'g', 'A', 'F', '/', ':', '`', '@', '\0', '\xff', ' '}) {
            std::string odd = d;
            odd[at] = bad;
            const std::uint32_t oddId = digests.intern(odd);
            EXPECT_NE(oddId, id);
            EXPECT_EQ(digests.storedForm(oddId), odd);
            EXPECT_EQ(digests.text(oddId), odd);
            EXPECT_FALSE(digests.equals(id, odd));
        }
    }
    const std::uint32_t shorter = digests.intern(std::string(63, 'a'));
    EXPECT_EQ(digests.find(std::string(63, 'a')), shorter);
    EXPECT_EQ(digests.storedForm(shorter), std::string(63, 'a'));
}

// A reader's batches are filled from the observations of the batches it
// dropped (or a sink kept and dropped): their texts keep their buffers,
// nothing else is kept.
TEST(ObservationPool, SpentObservationsAreFilledAgainWithEveryFieldReset) {
    const auto pool = makeObservationPool();
    const std::string longId(100, 'x');
    const char* oldBuffer = nullptr;
    {
        ObservationBatch b(pool);
        CallerObservation& c = b.addCallerEvent();
        c.callId = longId;
        c.bizNo = "ORD-1234567890123456789";
        c.traceId = "trace-1234567890123456789";
        c.attempt = 3;
        c.at = 42;
        c.origin = MessageOrigin{1, 2, 3};
        oldBuffer = c.callId.data();
        ReceiptObservation& r = b.addReceipt();
        r.callId = "receipt-call-1234567890";
        EXPECT_EQ(b.size(), 2u);
        // Moved (to a sink that keeps it): the batch is empty and still
        // filled from the pool.
        ObservationBatch delivered(std::move(b));
        EXPECT_TRUE(b.empty());
        EXPECT_TRUE(b.pooled());
        EXPECT_EQ(delivered.size(), 2u);
    } // both dropped: back to the pool
    EXPECT_EQ(spentObservations(*pool), 2u);
    ObservationBatch again(pool);
    CallerObservation& c = again.addCallerEvent();
    EXPECT_EQ(c.callId, "");
    EXPECT_EQ(c.bizNo, "");
    EXPECT_EQ(c.traceId, "");
    EXPECT_EQ(c.attempt, 0);
    EXPECT_EQ(c.at, kNoTime);
    EXPECT_EQ(c.origin.partition, -1);
    c.callId = longId;
    EXPECT_EQ(c.callId.data(), oldBuffer); // no allocation
    // One that could not be filled is taken back, and handed out again reset.
    again.addReceipt().callId = "half-decoded";
    again.dropLastReceipt();
    EXPECT_TRUE(again.receipts.empty());
    EXPECT_EQ(again.addReceipt().callId, "");
    // A batch without a pool works as a plain one.
    ObservationBatch plain;
    plain.addRecord().callId = "r";
    plain.clear();
    EXPECT_TRUE(plain.empty());
}

// A batch cleared and filled again (a reader's, between deliveries) writes
// into the observations it had: same elements, same text buffers, each reset.
TEST(ObservationList, ClearedAndRefilledInPlaceWithLiveElementsOnlyVisible) {
    ObservationBatch b;
    for (int i = 0; i < 3; ++i)
        b.addCallerEvent().callId = "call-with-a-long-identifier-" + std::to_string(i);
    b.callerEvents[1].attempt = 7;
    const CallerObservation* first = &b.callerEvents[0];
    const char* buffer = b.callerEvents[0].callId.data();
    ObservationBatch copy = b; // (copies hold the live ones)
    b.clear();
    EXPECT_TRUE(b.callerEvents.empty());
    EXPECT_EQ(b.callerEvents.begin(), b.callerEvents.end());
    EXPECT_THROW((void)b.callerEvents.at(0), std::out_of_range);
    CallerObservation& again = b.addCallerEvent();
    EXPECT_EQ(&again, first);
    EXPECT_EQ(again.callId, "");
    again.callId = "call-with-a-long-identifier-9";
    EXPECT_EQ(again.callId.data(), buffer);
    EXPECT_EQ(b.addCallerEvent().attempt, 0); // the second, reset
    b.dropLastCallerEvent();
    EXPECT_EQ(b.callerEvents.size(), 1u);
    ASSERT_EQ(copy.callerEvents.size(), 3u);
    EXPECT_EQ(copy.callerEvents.at(1).attempt, 7);
    EXPECT_EQ(copy.callerEvents.back().callId, "call-with-a-long-identifier-2");
    // The oversized are taken out, the rest kept in order.
    copy.callerEvents[1].callId = std::string(5000, 'x');
    EXPECT_EQ(rejectOversized(copy, 256), 1u);
    ASSERT_EQ(copy.callerEvents.size(), 2u);
    EXPECT_EQ(copy.callerEvents[1].callId, "call-with-a-long-identifier-2");
}

// Ten batches dropped: the pool keeps a batch's worth or a few, frees the rest.
TEST(ObservationPool, HoldsAFewBatchesWorthAtMost) {
    const auto pool = makeObservationPool();
    for (int k = 0; k < 10; ++k) {
        ObservationBatch b(pool);
        for (int i = 0; i < 100; ++i)
            b.records.emplace_back();
    }
    EXPECT_GE(spentObservations(*pool), 100u);
    EXPECT_LE(spentObservations(*pool), 400u);
}

// What waits in the model's queue (issue 12): a batch packed comes back
// exactly, every field of every kind, texts of every length (a length of 128
// and more takes two bytes, 300 KB three); the reader's batch is left empty
// with its observations to fill again, and a batch unpacked into shows only
// what was packed.
TEST(PackedBatch, ObservationsComeBackExactlyAndTheReadersBatchIsFilledAgainInPlace) {
    ObservationBatch b;
    RecordObservation& rec = b.addRecord();
    rec.callId = std::string(127, 'a');
    rec.digest = std::string(128, 'b');
    rec.status = RecordStatus::Success;
    rec.firstSource = "";
    rec.lockVersion = -7;
    rec.createdAt = INT64_MIN + 1;
    rec.updatedAt = INT64_MAX;
    rec.expireAt = kNoTime;
    AttemptObservation& att = b.addAttempt();
    att.id = INT64_MIN;
    att.callId = std::string(300'000, 'c');
    att.digest = std::string("d\0igest", 7);
    att.sourceInstance = "\xe6\x97\xa5\xe6\x9c\xac";
    att.traceId = "t";
    att.outcome = AttemptOutcome::DigestConflict;
    att.arrivedAt = 1;
    att.finishedAt = kNoTime;
    ReceiptObservation& rcp = b.addReceipt();
    rcp.callId = "receipt-call";
    rcp.status = RecordStatus::Failed;
    rcp.resultRef = "result-store/2024/05/20/receipt-call";
    rcp.finishedAt = 1'716'200'000'123;
    rcp.version = INT64_MAX;
    rcp.sourceInstance = "pay-svc-3";
    rcp.digest = std::string(64, 'f');
    rcp.origin = MessageOrigin{31, 1'234'567'890'123, 1'716'200'000'999};
    for (int i = 0; i < 3; ++i) {
        CallerObservation& c = b.addCallerEvent();
        c.callId = "call-with-a-long-identifier-" + std::to_string(i);
        c.state = CallerState::TimeoutUnknown;
        c.at = 1'716'200'000'000 + i;
        c.instance = "order-api-" + std::to_string(i);
        c.attempt = i + 1;
        c.bizNo = "ORD-" + std::to_string(i);
        c.digest = std::string(64, '0' + static_cast<char>(i));
        c.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        c.origin = MessageOrigin{i, i * 10, 1'716'200'000'500 + i};
    }
    b.rejected.push_back({"not JSON", "receipts.pay/3@1284", "{oops"});
    b.gaps.push_back({"receipts.pay/3", 10, 20});
    b.probes.push_back({"probed-call", true, false});
    const ObservationBatch expected = b; // (copies hold the live ones)
    const CallerObservation* firstCaller = &b.callerEvents[0];
    const char* firstCallerText = b.callerEvents[0].callId.data();

    PackedBatch packed;
    pack(b, packed);
    EXPECT_EQ(packed.observations(), 7u);
    EXPECT_TRUE(b.empty());
    EXPECT_TRUE(b.rejected.empty());
    EXPECT_TRUE(b.gaps.empty());
    // Packed: the fixed fields and the texts, less than the observations take.
    EXPECT_LT(packed.used, 300'000u + 128 + 127 + 1000);
    // The reader fills its batch again: the same observation, its buffer kept.
    CallerObservation& again = b.addCallerEvent();
    EXPECT_EQ(&again, firstCaller);
    EXPECT_EQ(again.callId, "");
    again.callId = "call-with-a-long-identifier-9";
    EXPECT_EQ(again.callId.data(), firstCallerText);

    // Unpacked into a batch that held more (spent ones stay unseen).
    ObservationBatch out;
    for (int i = 0; i < 5; ++i)
        out.addCallerEvent().callId = "stale-" + std::to_string(i);
    unpack(packed, out);
    const auto sameRecord = [](const RecordObservation& x, const RecordObservation& y) {
        return x.callId == y.callId && x.digest == y.digest && x.status == y.status &&
               x.firstSource == y.firstSource && x.lockVersion == y.lockVersion &&
               x.createdAt == y.createdAt && x.updatedAt == y.updatedAt && x.expireAt == y.expireAt;
    };
    const auto sameOrigin = [](const MessageOrigin& x, const MessageOrigin& y) {
        return x.partition == y.partition && x.offset == y.offset &&
               x.kafkaTimestamp == y.kafkaTimestamp;
    };
    ASSERT_EQ(out.records.size(), 1u);
    EXPECT_TRUE(sameRecord(out.records[0], expected.records[0]));
    ASSERT_EQ(out.attempts.size(), 1u);
    const AttemptObservation &a = out.attempts[0], &ea = expected.attempts[0];
    EXPECT_TRUE(a.id == ea.id && a.callId == ea.callId && a.digest == ea.digest &&
                a.sourceInstance == ea.sourceInstance && a.traceId == ea.traceId &&
                a.outcome == ea.outcome && a.arrivedAt == ea.arrivedAt &&
                a.finishedAt == ea.finishedAt);
    EXPECT_EQ(a.digest.size(), 7u);
    ASSERT_EQ(out.receipts.size(), 1u);
    const ReceiptObservation &r = out.receipts[0], &er = expected.receipts[0];
    EXPECT_TRUE(r.callId == er.callId && r.status == er.status && r.resultRef == er.resultRef &&
                r.finishedAt == er.finishedAt && r.version == er.version &&
                r.sourceInstance == er.sourceInstance && r.digest == er.digest &&
                sameOrigin(r.origin, er.origin));
    ASSERT_EQ(out.callerEvents.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const CallerObservation &c = out.callerEvents[i], &ec = expected.callerEvents[i];
        EXPECT_TRUE(c.callId == ec.callId && c.state == ec.state && c.at == ec.at &&
                    c.instance == ec.instance && c.attempt == ec.attempt && c.bizNo == ec.bizNo &&
                    c.digest == ec.digest && c.traceId == ec.traceId &&
                    sameOrigin(c.origin, ec.origin))
            << i;
    }
    ASSERT_EQ(out.rejected.size(), 1u);
    EXPECT_EQ(out.rejected[0].sample, "{oops");
    ASSERT_EQ(out.gaps.size(), 1u);
    EXPECT_EQ(out.gaps[0].lost(), 10);
    ASSERT_EQ(out.probes.size(), 1u);
    EXPECT_EQ(out.probes[0].callId, "probed-call");
    EXPECT_EQ(out.size(), 7u);

    // Packed again into the same buffer: a smaller batch, nothing of the
    // first left over; an empty one packs to nothing.
    ObservationBatch small;
    small.addReceipt().callId = "only";
    pack(small, packed);
    EXPECT_EQ(packed.observations(), 1u);
    EXPECT_TRUE(packed.rejected.empty());
    unpack(packed, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out.receipts[0].callId, "only");
    EXPECT_EQ(out.receipts[0].version, 0);
    ObservationBatch none;
    pack(none, packed);
    EXPECT_EQ(packed.used, 0u);
    unpack(packed, out);
    EXPECT_TRUE(out.empty());
}
