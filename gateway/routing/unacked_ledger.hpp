// Messages forwarded to one worker and not yet acknowledged, oldest first,
// with copies of their payloads. They serve two rules: credits (a worker
// with too much outstanding stops the gateway reading its clients) and
// replay (a dead worker's outstanding messages go to the connections' next
// worker, in order). Pure: no I/O, no clock.
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
  [[nodiscard]] std::size_t bytes() const noexcept { return payloads_.size() - head_; }
  [[nodiscard]] std::uint64_t last_seq() const noexcept { return next_seq_ - 1; }

  // fn(conn_id, binary, payload) for every outstanding message, oldest first.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& e : entries_)
      fn(e.conn_id, e.binary, std::span<const std::uint8_t>(payloads_.data() + e.offset, e.size));
  }

 private:
  struct entry {
    std::uint64_t seq;
    std::uint64_t conn_id;
    std::size_t offset;  // of the payload in payloads_
    std::uint32_t size;
    bool binary;
  };

  std::uint64_t next_seq_ = 1;
  std::deque<entry> entries_;
  byte_buffer payloads_;
  std::size_t head_ = 0;  // bytes before this offset are acknowledged
};

}  // namespace fg::gateway
