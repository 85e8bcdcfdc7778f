// The highest offset delivered per numbered room, and the offsets that
// never arrived live: a delivery whose offset is more than one above the
// room's top (same epoch) skipped messages that members must recover with
// `since`. A broker counts them so that losses nobody sees at the
// publisher (a subscription dropped while a slot moved, a shard's
// failover) are counted where they happen.
//
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "worker/app.hpp"

namespace fg::worker {

class room_tops {
 public:
  // Notes a delivery; returns how many offsets it skipped (0 for an
  // unnumbered one, the first of a room, or a new epoch).
  std::uint64_t note(std::string_view room, room_position at);
  void forget(std::string_view room);
  // Where the room's deliveries stand (none: no numbered one yet).
  [[nodiscard]] std::optional<history_since> since(std::string_view room) const;
  // Whether a delivery at `at` would be new here: unnumbered, or its room
  // has no top yet, another epoch, or a lower one (a refill skips what a
  // live copy brought first).
  [[nodiscard]] bool is_new(std::string_view room, room_position at) const;
  // Messages kept by the rooms' histories, each at most `history_size`.
  [[nodiscard]] std::uint64_t kept(std::size_t history_size) const;

 private:
  struct top {
    std::string epoch;
    std::uint64_t offset = 0;
  };
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, top, string_hash, std::equal_to<>> tops_;
};

}  // namespace fg::worker
