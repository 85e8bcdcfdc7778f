#include "worker/broker/room_tops.hpp"

#include <algorithm>

namespace fg::worker {

std::uint64_t room_tops::note(std::string_view room, room_position at) {
  if (at.offset == 0) return 0;
  const auto it = tops_.find(room);
  if (it == tops_.end()) {
    tops_.emplace(std::string(room), top{std::string(at.epoch), at.offset});
    return 0;
  }
  top& t = it->second;
  if (t.epoch != at.epoch) {
    t = top{std::string(at.epoch), at.offset};
    return 0;
  }
  const std::uint64_t skipped = at.offset > t.offset + 1 ? at.offset - t.offset - 1 : 0;
  t.offset = std::max(t.offset, at.offset);
  return skipped;
}

std::optional<history_since> room_tops::since(std::string_view room) const {
  const auto it = tops_.find(room);
  if (it == tops_.end()) return std::nullopt;
  return history_since{it->second.epoch, it->second.offset};
}

bool room_tops::is_new(std::string_view room, room_position at) const {
  if (at.offset == 0) return true;
  const auto it = tops_.find(room);
  return it == tops_.end() || it->second.epoch != at.epoch || at.offset > it->second.offset;
}

void room_tops::forget(std::string_view room) {
  if (const auto it = tops_.find(room); it != tops_.end()) tops_.erase(it);
}

std::uint64_t room_tops::kept(std::size_t history_size) const {
  std::uint64_t n = 0;
  for (const auto& [room, t] : tops_) n += std::min<std::uint64_t>(t.offset, history_size);
  return n;
}

}  // namespace fg::worker
