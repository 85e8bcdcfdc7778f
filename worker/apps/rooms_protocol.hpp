// The /rooms JSON text protocol, as a pure parser and two formatters.
//
//   {"op":"join","room":R}               join room R (idempotent)
//   {"op":"join","room":R,"recover":true}
//                                        join, answered with the room's
//                                        position: {"joined":R,"epoch":E,"offset":TOP}
//   {"op":"join","room":R,"since":{"epoch":E,"offset":N}}
//                                        join and first receive every message
//                                        after N, then {"joined":R,...,"recovered":true|false}
//   {"op":"leave","room":R}              leave room R (idempotent)
//   {"op":"publish","room":R,"data":V}   every member of R in the cluster,
//                                        the publisher included if a member,
//                                        receives {"room":R,"data":V,"offset":N}
//                                        ("offset" only where history is on)
//
// docs/PROTOCOL.md describes every op, reply and error for clients.
//
// V is forwarded as the exact bytes the publisher wrote (the raw span of
// the value, never re-serialized). R is compared and re-serialized after
// decoding, so "r" and "\u0072" are one room. Members other than op, room
// and data are ignored; a repeated member counts with its last value.
// Anything else gets {"error":"..."} naming the problem; a text nested
// more than json::max_depth (512) levels deep is refused as invalid, and
// checking a text never builds a document (json::check_syntax).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "worker/app.hpp"

namespace fg::worker {

inline constexpr std::size_t max_room_name_bytes = 256;

enum class rooms_op : unsigned char { join, leave, publish };

struct rooms_request {
  rooms_op op = rooms_op::join;
  std::string room;       // decoded, 1..max_room_name_bytes bytes of UTF-8
  std::string_view data;  // publish only: raw JSON of the value, points into the message
  // join only: answer with the room's position ("recover":true), or also
  // deliver what came after `since` first.
  bool recover = false;
  std::optional<history_since> since;
  [[nodiscard]] bool wants_position() const noexcept { return recover || since.has_value(); }
};

struct rooms_parse_result {
  std::optional<rooms_request> request;  // set on success
  std::string error;                     // set on failure: a human-readable reason
};

rooms_parse_result parse_rooms_request(std::string_view text);

// {"room":<room as a JSON string>,"data":<raw_data>}
std::string rooms_delivery(std::string_view room, std::string_view raw_data);

// `delivery` (a rooms_delivery) with ,"offset":<offset> before its
// closing brace.
std::string rooms_delivery_at(std::string_view delivery, std::uint64_t offset);

// The answer to a join that asked for its position (see the table in
// docs/PROTOCOL.md): {"joined":R, ...} for what `h` found; `asked_since`
// adds "recovered".
std::string rooms_joined(std::string_view room, const room_history& h, bool asked_since);

// {"error":<message as a JSON string>}
std::string rooms_error(std::string_view message);

}  // namespace fg::worker
