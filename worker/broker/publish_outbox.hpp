// The publishes not yet acknowledged by Redis, oldest first: the first
// written() of them were handed to the publish connection, the rest wait
// (an outage, or the flush's gate). Bounded: beyond the bound the oldest
// one not yet written is dropped and handed back to the caller; written
// ones are never dropped, they may already be published.
//
// A lost connection turns the written ones into unwritten ones again:
// maybe published, maybe not, they are sent again and receivers skip the
// copies they already have (publish_dedup).
//
// Pure: no I/O, no clock; the caller writes and counts.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "worker/broker/publish_record.hpp"

namespace fg::worker {

class publish_outbox {
 public:
  // A bound of 0 is taken as 1.
  explicit publish_outbox(std::size_t bound);

  // Queues `r` behind the others; returns what the bound pushed out (oldest
  // first), for the caller to count and deliver locally if still owed.
  std::vector<publish_record_ptr> push(publish_record_ptr r);

  [[nodiscard]] bool has_unwritten() const noexcept { return written_ < queue_.size(); }
  // The oldest one not yet written; only while has_unwritten().
  [[nodiscard]] publish_record& next_unwritten() { return *queue_[written_]; }
  // next_unwritten() was handed to the connection at `now`.
  void mark_written(std::chrono::steady_clock::time_point now);
  // Redis answered the oldest written one (replies come in order): it
  // leaves. Null when nothing is written (a reply nobody waits for).
  publish_record_ptr acknowledge();
  // The publish connection is gone: every written one is to be sent again.
  void connection_lost() noexcept { written_ = 0; }
  // Removes the ones never written (oldest first), for another connection.
  std::vector<publish_record_ptr> take_unwritten();
  // Empties the outbox; returns how many were never written.
  std::size_t clear();

  // When the oldest written one still unanswered was written (nullopt:
  // none is): a publish connection whose peer went silent shows here.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> oldest_written() const {
    if (written_ == 0) return std::nullopt;
    return queue_.front()->written;
  }
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  [[nodiscard]] std::size_t written() const noexcept { return written_; }
  [[nodiscard]] std::size_t unwritten() const noexcept { return queue_.size() - written_; }
  [[nodiscard]] std::size_t bound() const noexcept { return bound_; }

  // The ones not yet written, oldest first (for a range-for); valid until
  // the outbox changes.
  struct records_view {
    std::deque<publish_record_ptr>::const_iterator first, last;
    [[nodiscard]] auto begin() const { return first; }
    [[nodiscard]] auto end() const { return last; }
  };
  [[nodiscard]] records_view unwritten_records() const {
    return {queue_.begin() + static_cast<std::ptrdiff_t>(written_), queue_.end()};
  }

 private:
  std::size_t bound_;
  std::deque<publish_record_ptr> queue_;
  std::size_t written_ = 0;  // the first written_ of queue_
};

}  // namespace fg::worker
