// With room history on (--history-size > 0), Redis itself numbers the
// messages of a room: the publish script (history_scripts.hpp) puts this
// line in front of the framegate envelope it publishes,
//
//   "fgo " <epoch> ' ' <offset> '\n' <envelope of redis_envelope.hpp>
//
// epoch: 1 to 32 characters of [0-9a-z]; offset: a decimal from 1, without
// leading zeros, below 10^14 (Lua prints larger numbers in exponent form).
// The line is outside the envelope's MAC: Redis writes it after the
// publisher signed. Anyone who can PUBLISH can put any line in front of a
// message, but not in front of one it did not see first, and the copy of
// a message already seen is dropped by its (origin, seq) anyway.
//
// Pure and allocation-free: it reads untrusted bytes (fuzz target
// redis_inbound).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fg::worker {

inline constexpr std::size_t max_room_epoch_bytes = 32;
inline constexpr std::uint64_t max_room_offset = 99'999'999'999'999;

struct room_offset_header {
  std::string_view epoch;
  std::uint64_t offset = 0;
  std::string_view rest;  // the envelope behind the line
};

// The header at the start of `message`, or nullopt when it has none (or a
// malformed one).
std::optional<room_offset_header> parse_room_offset_header(std::string_view message) noexcept;

// A valid epoch (what the scripts are given, and what clients send back).
bool valid_room_epoch(std::string_view epoch) noexcept;

}  // namespace fg::worker
