#include "worker/broker/room_channel.hpp"

namespace fg::worker {

room_channel::room_channel(std::string_view prefix, bool sharded)
    : head_(std::string(prefix) + (sharded ? "{room:" : "room:")), sharded_(sharded) {}

std::string room_channel::of(std::string_view room) const {
  std::string ch;
  ch.reserve(head_.size() + room.size() + 1);
  ch.append(head_).append(room);
  if (sharded_) ch.push_back('}');
  return ch;
}

std::optional<std::string_view> room_channel::room_of(std::string_view channel) const {
  if (!channel.starts_with(head_)) return std::nullopt;
  channel.remove_prefix(head_.size());
  if (sharded_) {
    if (!channel.ends_with('}')) return std::nullopt;
    channel.remove_suffix(1);
  }
  return channel;
}

}  // namespace fg::worker
