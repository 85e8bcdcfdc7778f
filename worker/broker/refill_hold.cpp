#include "worker/broker/refill_hold.hpp"

#include <utility>

namespace fg::worker {

void refill_hold::begin(std::string_view room) {
  if (!rooms_.contains(room)) rooms_.emplace(std::string(room), room_hold{});
}

refill_hold::kept refill_hold::keep(std::string_view room, std::string_view payload, room_position at,
                                    deflated_segment pre) {
  // Every live delivery asks: with no refill reading (nearly always), not
  // even the room's name is hashed.
  if (rooms_.empty()) return kept::not_held;
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return kept::not_held;
  room_hold& h = it->second;
  const std::size_t bytes = payload.size() + pre.bytes.size();
  if (h.kept.size() + 1 > max_messages_ || h.bytes + bytes > max_bytes_) {
    overflowed_ = std::move(h.kept);
    rooms_.erase(it);
    return kept::overflowed;
  }
  h.kept.push_back(
      held_delivery{std::string(payload), std::string(at.epoch), at.offset, std::string(pre.bytes), pre.covers});
  h.bytes += bytes;
  return kept::held;
}

std::vector<held_delivery> refill_hold::end(std::string_view room) {
  const auto it = rooms_.find(room);
  if (it == rooms_.end()) return {};
  std::vector<held_delivery> out = std::move(it->second.kept);
  rooms_.erase(it);
  return out;
}

}  // namespace fg::worker
