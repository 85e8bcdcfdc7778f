// Live deliveries of a room held back while the room's refill reads its
// history. When a worker's subscription comes back after a partition, the
// messages published while it was down come from the history, and a live
// message published after the new subscription may arrive before that
// read's answer. Delivered at once, it would pass the older ones, which
// then stay a gap. Held here, it goes out behind them, or is dropped as a
// copy of what the refill brought.
//
// Bounded per room (messages and bytes): past the bound the hold ends
// and what it kept goes out at once, in order; the refill then delivers
// only what is newer than the live ones (the older ones stay a counted
// gap, as without a hold). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/app.hpp"

namespace fg::worker {

// A held delivery: its own copy of the bytes (the channel message they
// came in is gone when the hold ends).
struct held_delivery {
  std::string payload;
  std::string epoch;
  std::uint64_t offset = 0;
  std::string deflated;  // the publisher's compression, if any
  std::size_t covers = 0;

  [[nodiscard]] room_position at() const noexcept { return {epoch, offset}; }
  [[nodiscard]] deflated_segment segment() const noexcept { return {deflated, deflated.empty() ? 0 : covers}; }
};

class refill_hold {
 public:
  static constexpr std::size_t default_max_messages = 4096;
  static constexpr std::size_t default_max_bytes = 16u << 20;

  explicit refill_hold(std::size_t max_messages = default_max_messages, std::size_t max_bytes = default_max_bytes)
      : max_messages_(max_messages), max_bytes_(max_bytes) {}

  // Starts holding the room's live deliveries (again: what it held stays).
  void begin(std::string_view room);
  [[nodiscard]] bool holding(std::string_view room) const { return !rooms_.empty() && rooms_.contains(room); }

  // What keep() did with a delivery.
  enum class kept : std::uint8_t {
    held,       // kept behind the room's refill
    not_held,   // the room has no hold: deliver it now
    overflowed  // over the bound: the hold ended; deliver what overflow() returns, then this one
  };
  kept keep(std::string_view room, std::string_view payload, room_position at, deflated_segment pre);

  // Ends the room's hold: what it kept, oldest first (empty if none).
  std::vector<held_delivery> end(std::string_view room);
  // After keep() said overflowed: what the ended hold had kept.
  std::vector<held_delivery> overflow() { return std::move(overflowed_); }

  // Every hold ended, nothing delivered (the broker stops).
  void clear() noexcept { rooms_.clear(); }

  [[nodiscard]] std::size_t rooms() const noexcept { return rooms_.size(); }

 private:
  struct room_hold {
    std::vector<held_delivery> kept;
    std::size_t bytes = 0;
  };
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  std::size_t max_messages_;
  std::size_t max_bytes_;
  std::unordered_map<std::string, room_hold, string_hash, std::equal_to<>> rooms_;
  std::vector<held_delivery> overflowed_;
};

}  // namespace fg::worker
