// How a room's Redis channel is named, and the way back.
//
//   one Redis:       <prefix>room:<R>
//   a Redis Cluster: <prefix>{room:<R>}
//
// On a cluster the channel carries its own hash tag: the channel and every
// key of the room (room_key: the channel and a suffix) then share one hash
// slot whatever R holds, braces included, which a script that numbers,
// keeps and SPUBLISHes a message in one step requires. The prefix must
// then hold no brace (checked at start).
//
// Pure, allocation-free on the way back.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fg::worker {

class room_channel {
 public:
  room_channel(std::string_view prefix, bool sharded);

  [[nodiscard]] std::string of(std::string_view room) const;
  // The room of a channel named by of(); nullopt for any other channel.
  [[nodiscard]] std::optional<std::string_view> room_of(std::string_view channel) const;
  [[nodiscard]] bool sharded() const noexcept { return sharded_; }

 private:
  std::string head_;  // "<prefix>room:" or "<prefix>{room:"
  bool sharded_;
};

}  // namespace fg::worker
