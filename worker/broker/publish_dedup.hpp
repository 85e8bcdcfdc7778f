// Exactly once, the bookkeeping: which copies coming back from Redis are
// delivered, and which of this worker's publishes its own members still
// wait for. The rule it serves (docs/ARCHITECTURE.md, "Rooms across hosts"):
//  - Receivers skip a copy whose seq they accepted recently from the same
//    origin in the same room (a copy sent again after a reconnect).
//    accept() is that rule; see "The window" below for why it keeps no
//    high-water mark.
//  - A publish of ours made in Redis mode is owed locally: our members get
//    it from its own copy (owe(), then settle() when a copy comes back, or
//    take_owed() when the connection is lost and the copy cannot be counted
//    on any more).
//  - A publish of ours delivered locally (delivered_locally()) has its copy
//    skipped when it comes back (own_copy_delivered()), or forgotten when
//    it never will (forget()).
//
// The window. Per (origin, room), the last `window` seqs accepted are
// remembered; a copy is a duplicate exactly when its seq is among them.
// There is no high-water mark: the header is not authenticated, and any
// subscriber sees every origin id, so "skip what is not above the highest
// seq seen" let one forged `fg1 <origin> ffffffffffffffff` silence that
// origin until it restarted. Here a forged seq (any value, far ahead or
// not) only takes one slot: it can make the one genuine publish with that
// very seq look like a duplicate, and a flood of forgeries can push genuine
// seqs out of the window, which at worst lets a resent copy through twice.
// It never silences an origin. The copies sent again after a reconnect are
// the unacknowledged tail of the publisher's outbox, resent in order right
// away: they are caught as long as fewer than `window` publishes to that
// room were accepted from the origin since the first copy.
//
// Pure: the caller delivers; this only decides and remembers. Bounded: the
// (origin, room) table is cleared past max_pairs (workers come and go; at
// worst a copy sent again after a reconnect gets through), a room's entries
// leave when the worker leaves the room (forget_room), the seqs delivered
// locally are trimmed to `local_bound`, oldest first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/broker/publish_record.hpp"

namespace fg::worker {

class publish_dedup {
 public:
  static constexpr std::size_t max_pairs = 16384;  // (origin, room) pairs remembered
  static constexpr std::size_t window = 1024;      // seqs remembered per pair

  explicit publish_dedup(std::size_t local_bound) : local_bound_(local_bound) {}

  // The rule: true (and remembered) unless `seq` is among the last `window`
  // seqs accepted from `origin` in `room`. `authenticated` (the header's
  // MAC was checked, so only cluster members wrote the seq): also false
  // for a seq below all of a full window, a replay of an old message; a
  // genuine copy sent again never is (its origin resends its unacknowledged
  // tail before anything newer).
  bool accept(std::uint64_t origin, std::string_view room, std::uint64_t seq, bool authenticated = false);
  // This worker left `room`: what was remembered for it goes.
  void forget_room(std::string_view room);
  [[nodiscard]] std::size_t pairs() const noexcept { return pairs_; }

  // `r`, published by us in Redis mode, reaches our members through its copy.
  void owe(publish_record_ptr r);
  // Our copy `seq` came back. Our copies come back in seq order: the owed
  // ones below it never will. Returns those still owed, oldest first, for
  // the caller to deliver locally; no longer waits for any up to `seq`.
  std::vector<publish_record_ptr> settle(std::uint64_t seq);
  // The connection is gone: every publish still owed, oldest first, for
  // the caller to deliver locally. Nothing is waited for any more.
  std::vector<publish_record_ptr> take_owed();
  [[nodiscard]] std::size_t owed() const noexcept { return echo_wait_.size(); }

  // The caller delivered `r` to our members: it is owed no more and its
  // copy, should it come back, is skipped.
  void delivered_locally(publish_record& r);
  // Our publish `seq` will never come back (dropped before it was written).
  void forget(std::uint64_t seq) { self_delivered_.erase(seq); }
  // Our copy `seq` was accepted: true when it was delivered locally already
  // (skip it). Forgets it and every earlier one, whose copies will not come.
  bool own_copy_delivered(std::uint64_t seq);
  [[nodiscard]] std::size_t delivered_locally_pending() const noexcept { return self_delivered_.size(); }

 private:
  std::size_t local_bound_;
  std::deque<publish_record_ptr> echo_wait_;  // owed locally, waiting for their own copy
  std::set<std::uint64_t> self_delivered_;    // our seqs delivered locally: skip their copy
  // The last `window` seqs accepted from one origin in one room, in a ring.
  struct seen_seqs {
    std::vector<std::uint64_t> ring;
    std::size_t next = 0;   // where the next seq goes once the ring is full
    std::uint64_t max = 0;  // above it nothing was seen: no scan needed
    [[nodiscard]] bool contains(std::uint64_t seq) const noexcept;
    [[nodiscard]] bool below_full_window(std::uint64_t seq) const noexcept;
    void add(std::uint64_t seq);
  };
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using by_origin = std::unordered_map<std::uint64_t, seen_seqs>;
  std::unordered_map<std::string, by_origin, string_hash, std::equal_to<>> seen_;  // room -> origin -> seqs
  std::size_t pairs_ = 0;
};

}  // namespace fg::worker
