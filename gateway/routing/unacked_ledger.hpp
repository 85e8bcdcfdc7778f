// Messages forwarded to one worker and not yet acknowledged, oldest first.
// They serve two rules: credits (a worker with too much outstanding stops
// the gateway reading its clients) and replay (a dead worker's outstanding
// messages go to the connections' next worker, in order). Pure: no I/O, no
// clock.
//
// The ledger copies no payload: it holds the blocks of the link's output
// that carry them (link_port::send_message says where), and lets each go
// once every message in it is acknowledged; the link reuses a block only
// when nobody holds it. (A copy of each payload into segments of the
// ledger's own cost the 1 KiB closed loop through a worker 11% of its CPU
// per message; docs/BENCHMARKS.md, "Seventh step".)
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>

#include "common/byte_buffer.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway {

class unacked_ledger {
 public:
  // The sequence number the next record() gets (1, 2, ...): the link
  // encodes it with the message before the message is recorded.
  [[nodiscard]] std::uint64_t next_seq() const noexcept { return next_seq_; }
  // Records a message of `size` payload bytes, sent now, stored where `at`
  // says; returns its sequence number (next_seq()).
  std::uint64_t record(std::uint64_t conn_id, bool binary, std::size_t size, const stored_payload& at);
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
  // Memory of the link blocks held for replay.
  [[nodiscard]] std::size_t held_bytes() const noexcept;
  [[nodiscard]] std::size_t held_blocks() const noexcept { return blocks_.size(); }
  [[nodiscard]] std::uint64_t last_seq() const noexcept { return next_seq_ - 1; }

  // fn(conn_id, binary, payload) for every outstanding message, oldest first.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& e : entries_)
      fn(e.conn_id, e.binary, std::span<const std::uint8_t>(e.block->data() + e.offset, e.size));
  }

 private:
  struct entry {
    std::uint64_t seq;
    std::uint64_t conn_id;
    const byte_buffer* block;  // held in blocks_; its bytes may move while the link appends, so an offset
    std::size_t offset;
    std::uint32_t size;
    bool binary;
  };
  // A block and the last message in it: messages go to a link's blocks in
  // order, so the blocks of the outstanding messages are a queue too.
  struct held_block {
    std::shared_ptr<const byte_buffer> block;
    std::uint64_t last_seq;
  };

  std::uint64_t next_seq_ = 1;
  std::deque<entry> entries_;
  std::deque<held_block> blocks_;
  std::size_t bytes_ = 0;  // outstanding payload bytes
};

}  // namespace fg::gateway
