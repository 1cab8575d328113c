#pragma once
// Calls whose verdict is final while a window loads, packed (issue 12): they
// left the store after the grace, but a later call of the same digest or bizNo
// (a key rotation) or the same callId may still come within
// key_rotation_window, and then the store takes them back (CallStore thaws
// them). An entry is one run of bytes in blocks filled in the order calls
// leave, found by the hash of its callId, digest or bizNo; the blocks go, oldest
// first, once the window has passed their calls. A block is compressed once
// it is full (zstd): a healthy call's 130 bytes take about 50, and reading
// one back decompresses its block (64 KiB, some 20 us).
#include "models/call_store.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace callscope {

class FrozenCalls {
public:
    enum class Key : std::uint8_t { CallId, Digest, BizNo };

    // A call as given to add and as read back: texts in their interners'
    // stored form, events as the store keeps them. (Packed in between: the
    // store's handles, digest and bizNo ids are not kept.)
    struct Entry {
        std::string_view callId, digest, bizNo;
        std::vector<std::string_view> extraDigests;
        CallState state;
        std::span<const CallEvent> events;
    };

    // `firstAt`: the call's first event (its block goes once the window has
    // passed the latest of those).
    // False when it cannot be kept (4 billion entries in one load): the call stays.
    bool add(const Entry& e, EpochMillis firstAt);
    // More entries than this with one digest or bizNo make it a placeholder
    // (DetectionEngine::kMaxKeyRotationGroup): they group nothing.
    static constexpr std::size_t kMaxGroup = 1000;
    // Entries are told by number (`at` below): the ones still held, not
    // taken back, are found and read.
    // Adds to `out` the live entries whose `key` is `text`. False when more
    // than kMaxGroup entries had it (a placeholder: nothing is added).
    // (Not const: the keys of entries added since are indexed first.)
    bool find(Key key, std::string_view text, std::vector<std::uint64_t>& out) {
        return find(key, text, hashText(text), out);
    }
    // The same, given hashText(text) (an interner's hash of its stored form).
    bool find(Key key, std::string_view text, std::uint64_t textHash,
              std::vector<std::uint64_t>& out);
    // Fetches the slot a find of `text` reads first (see Interner::prefetch).
    void prefetch(Key key, std::uint64_t textHash); // hashText of the text
    // More than kMaxGroup entries had this digest or bizNo.
    bool crowded(Key key, std::string_view text) {
        indexAdded();
        return m_crowded.count(keyHash(key, text)) != 0;
    }
    // (Its texts and events stay valid until the next read, callIdOf or find.)
    Entry read(std::uint64_t at);
    // Its callId alone (its state and events not decoded); empty when the
    // entry is not held (taken back, or forgotten).
    std::string_view callIdOf(std::uint64_t at) const;
    // The entry was taken back into the store.
    void remove(std::uint64_t at);
    // Each entry held (the first `limit`), oldest first (the dashboard's
    // counts, live). The texts and events given stay valid for the call only.
    void forEach(const std::function<void(const Entry&)>& each, std::size_t limit = SIZE_MAX) const;
    // Forgets the blocks whose calls all began before `t`.
    void dropBefore(EpochMillis t);
    // Forgets the oldest blocks until at most `calls` entries and `bytes`
    // (memoryBytes) are held; returns how many entries went.
    std::size_t dropOldest(std::size_t calls, std::size_t bytes);
    void clear();
    // Told of each entry as it is added (+1) and as it goes (-1: taken back
    // or forgotten): live, the dashboard keeps its counts of them so (see
    // PackedCallTally) and reads none at 1 Hz. Unset, nothing is decoded.
    using Observer = std::function<void(const Entry&, int sign)>;
    void observe(Observer observer) { m_observer = std::move(observer); }
    // Live: the callId, state and attempts in brief of each entry forgotten
    // (not taken back) are kept for takeForgotten (CallStore's tombstones).
    void keepForgotten(bool keep) { m_keepForgotten = keep; }
    struct Forgotten {
        std::string callId;
        CallState state;
        AttemptPrint attempts;
    };
    std::vector<Forgotten> takeForgotten() { return std::exchange(m_forgotten, {}); }
    std::size_t size() const { return m_live; }
    std::size_t memoryBytes() const;

    FrozenCalls();
    ~FrozenCalls();
    FrozenCalls(const FrozenCalls&) = delete;
    FrozenCalls& operator=(const FrozenCalls&) = delete;

private:
    struct Block {
        std::unique_ptr<char[]> bytes;
        std::size_t used = 0;    // its entries' bytes (as read)
        std::size_t size = 0;    // the bytes it holds (compressed: fewer than used)
        bool sealed = false;     // full: no entry is added to it
        bool compressed = false; // (sealed, and zstd saved an eighth at least)
        std::size_t live = 0;    // entries not thawed
        EpochMillis latestFirst = INT64_MIN;
    };
    struct Codec; // zstd's contexts
    // A key of an entry: 8 bytes, the table at most half full.
    struct Slot {
        std::uint32_t tag = 0;   // the key's hash, high half (never 0); 0: empty
        std::uint32_t entry = 0; // the entry's number (see m_positions)
    };
    static std::uint64_t keyHash(Key key, std::uint64_t textHash);
    static std::uint64_t keyHash(Key key, std::string_view text) {
        return keyHash(key, hashText(text));
    }
    static std::uint32_t tagOf(std::uint64_t hash) {
        return static_cast<std::uint32_t>(hash >> 32) | 1u;
    }
    // The bytes at a position (block serial << 32 | offset), its block
    // decompressed when it is not the one decompressed last.
    const char* bytesAt(std::uint64_t position) const;
    // The position of a numbered entry still held, else UINT64_MAX.
    std::uint64_t positionOf(std::uint64_t entry) const;
    std::string_view keyText(std::uint64_t position, Key key) const;
    Entry decode(std::uint64_t position, std::vector<CallEvent>& events) const;
    void dropFront(); // the oldest block
    // The last block compressed (it is full): its bytes shrink to what
    // zstd makes of them, unless that saves little.
    void seal(Block& b);
    // The keys of the entries added since the last time into the table,
    // their slots fetched a few ahead: freezing a release's calls one by one
    // cost a cache miss a key, one after another.
    void indexAdded();
    void index(Key key, std::uint64_t hash, std::uint32_t entry);
    // The table again without the slots of forgotten entries (and of thawed
    // ones when `thawedToo`), half full at most.
    void rebuild(bool thawedToo = false);
    struct Added {
        std::uint64_t hash; // keyHash
        std::uint32_t entry;
        Key key;
    };
    std::vector<Added> m_added;
    std::vector<CallEvent> m_read; // the events of the entry read last
    Observer m_observer;
    bool m_keepForgotten = false;
    std::vector<Forgotten> m_forgotten;

    std::deque<Block> m_blocks;
    std::uint64_t m_firstBlock = 0; // the serial number of m_blocks.front()
    std::vector<Slot> m_slots;
    // Entry number - m_firstEntry -> position (block serial << 32 | offset),
    // kTaken set in the offset once the entry is taken back.
    std::deque<std::uint64_t> m_positions;
    // Beside each position, 16 more bits of each of its keys' hashes (by
    // Key): a slot's tag shares most of its bits with the slot's place, so
    // neighbours' tags match one lookup in a few hundred, and telling such a
    // match from the key by its text decompressed a block (0.5 s of a 5M-call
    // scan). Checked first, nearly none is read.
    struct Checks {
        std::uint16_t of[3];
    };
    static std::uint16_t checkOf(std::uint64_t hash) { return static_cast<std::uint16_t>(hash); }
    bool checks(std::uint32_t entry, Key key, std::uint64_t hash) const {
        return m_checks[entry - m_firstEntry].of[static_cast<int>(key)] == checkOf(hash);
    }
    std::deque<Checks> m_checks;
    static constexpr std::uint64_t kTaken = 0x8000'0000u;
    std::unique_ptr<Codec> m_codec;
    std::unique_ptr<char[]> m_spare;             // the raw bytes of the block sealed last
    std::vector<char> m_scratch;                 // a block being compressed
    mutable std::vector<char> m_cache;           // the block decompressed last...
    mutable std::uint64_t m_cached = UINT64_MAX; // ...its serial
    std::uint32_t m_firstEntry = 1;
    std::size_t m_filled = 0; // slots in use, stale ones included
    std::size_t m_live = 0;
    std::size_t m_bytes = 0;
    // Keys with more entries than a group holds: not indexed any more.
    std::unordered_set<std::uint64_t> m_crowded;
};

} // namespace callscope
