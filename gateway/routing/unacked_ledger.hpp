// Messages forwarded to one worker and not yet acknowledged, oldest first,
// with copies of their payloads. They serve two rules: credits (a worker
// with too much outstanding stops the gateway reading its clients) and
// replay (a dead worker's outstanding messages go to the connections' next
// worker, in order). Pure: no I/O, no clock.
//
// The copies live in fixed segments that never move: an acknowledgment
// frees whole segments. (Sliding the outstanding bytes to the front of one
// buffer, as this did before, copied about one payload per payload under
// steady load: never empty, the buffer was compacted every time its
// acknowledged half grew past the rest.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>

#include "common/byte_buffer.hpp"

namespace fg::gateway {

class unacked_ledger {
 public:
  // Records a message sent now; returns its sequence number (1, 2, ...).
  std::uint64_t record(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload);
  // The worker acknowledged every message up to `seq` (later acks may repeat earlier ones).
  void acknowledge(std::uint64_t seq);

  // Has every message up to `seq` been acknowledged?
  [[nodiscard]] bool acked(std::uint64_t seq) const noexcept { return entries_.empty() || entries_.front().seq > seq; }
  // Is there room for more: fewer than `max_count` messages and `max_bytes` bytes outstanding?
  [[nodiscard]] bool within(std::size_t max_count, std::size_t max_bytes) const noexcept {
    return entries_.size() < max_count && bytes() < max_bytes;
  }
  [[nodiscard]] std::size_t count() const noexcept { return entries_.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  // Memory held for payload copies, spare segment included.
  [[nodiscard]] std::size_t held_bytes() const noexcept;
  [[nodiscard]] std::uint64_t last_seq() const noexcept { return next_seq_ - 1; }

  // fn(conn_id, binary, payload) for every outstanding message, oldest first.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& e : entries_) fn(e.conn_id, e.binary, std::span<const std::uint8_t>(e.payload, e.size));
  }

 private:
  // Payloads up to this size share segments of this size; a larger one
  // gets a segment of its own.
  static constexpr std::size_t segment_bytes = 64 * 1024;

  struct entry {
    std::uint64_t seq;
    std::uint64_t conn_id;
    const std::uint8_t* payload;  // in segments_, which never reallocate
    std::uint64_t segment;        // its segment's number (see first_segment_)
    std::uint32_t size;
    bool binary;
  };

  // Appends to the last segment, opening one when it has no room.
  const std::uint8_t* store(std::span<const std::uint8_t> payload);
  // Frees the segments before the oldest outstanding entry's.
  void release_segments();

  std::uint64_t next_seq_ = 1;
  std::deque<entry> entries_;
  std::deque<byte_buffer> segments_;
  std::uint64_t first_segment_ = 0;  // the number of segments_.front()
  byte_buffer spare_;                // one freed segment kept for the next
  std::size_t bytes_ = 0;            // outstanding payload bytes
};

}  // namespace fg::gateway
