// This worker's share of room presence: room -> user -> its connections
// here. The broker writes it to Redis on every change and whole after a
// reconnect (or a room's move to another shard), so it keeps it itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fg::worker {

class presence_shares {
 public:
  using users = std::unordered_map<std::string, std::uint32_t>;

  // 0 connections: the user leaves the room's share.
  void set(std::string_view room, std::string_view user, std::uint32_t connections) {
    auto& u = rooms_[std::string(room)];
    if (connections > 0)
      u[std::string(user)] = connections;
    else
      u.erase(std::string(user));
    if (u.empty()) rooms_.erase(std::string(room));
  }
  // Null when no user of the room has connections here.
  [[nodiscard]] const users* of(std::string_view room) const {
    const auto it = rooms_.find(std::string(room));
    return it != rooms_.end() ? &it->second : nullptr;
  }
  [[nodiscard]] const std::unordered_map<std::string, users>& rooms() const noexcept { return rooms_; }
  [[nodiscard]] std::uint64_t connections() const {
    std::uint64_t n = 0;
    for (const auto& [room, u] : rooms_)
      for (const auto& [user, c] : u) n += c;
    return n;
  }

 private:
  std::unordered_map<std::string, users> rooms_;
};

}  // namespace fg::worker
