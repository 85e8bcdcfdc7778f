// Exactly once, the bookkeeping: which copies coming back from Redis are
// delivered, and which of this worker's publishes its own members still
// wait for. The rule it serves (docs/ARCHITECTURE.md, "Rooms across hosts"):
//  - Receivers skip any seq not above the last one seen from its origin
//    (a copy sent again after a reconnect). accept() is that rule.
//  - A publish of ours made in Redis mode is owed locally: our members get
//    it from its own copy (owe(), then settle() when a copy comes back, or
//    take_owed() when the connection is lost and the copy cannot be counted
//    on any more).
//  - A publish of ours delivered locally (delivered_locally()) has its copy
//    skipped when it comes back (own_copy_delivered()), or forgotten when
//    it never will (forget()).
//
// Pure: the caller delivers; this only decides and remembers. Bounded: the
// origins table is cleared past max_origins (workers come and go; at worst
// one copy sent again after a reconnect gets through), the seqs delivered
// locally are trimmed to `local_bound`, oldest first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <unordered_map>
#include <vector>

#include "worker/broker/publish_record.hpp"

namespace fg::worker {

class publish_dedup {
 public:
  static constexpr std::size_t max_origins = 4096;

  explicit publish_dedup(std::size_t local_bound) : local_bound_(local_bound) {}

  // The per-origin rule: true (and remembered) when `seq` is above the last
  // seq accepted from `origin`, or the origin is new.
  bool accept(std::uint64_t origin, std::uint64_t seq);

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
  std::deque<publish_record_ptr> echo_wait_;                    // owed locally, waiting for their own copy
  std::set<std::uint64_t> self_delivered_;                      // our seqs delivered locally: skip their copy
  std::unordered_map<std::uint64_t, std::uint64_t> last_seen_;  // origin -> highest seq accepted
};

}  // namespace fg::worker
