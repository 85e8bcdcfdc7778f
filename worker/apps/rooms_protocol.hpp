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
//   {"op":"presence","room":R}           who is in R: {"presence":R,"members":[...]}
//   "presence_events":true on a join     also receive {"room":R,"presence_event":...}
//   "id":<number or string> on any op    exactly one answer, repeating it
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
#include <vector>

#include "worker/app.hpp"

namespace fg::worker {

inline constexpr std::size_t max_room_name_bytes = 256;  // and no control characters

enum class rooms_op : unsigned char { join, leave, publish, presence };

// An op's "id" as written: a JSON number or string of at most this many bytes.
inline constexpr std::size_t max_request_id_bytes = 64;

struct rooms_request {
  rooms_op op = rooms_op::join;
  std::string room;       // decoded, 1..max_room_name_bytes bytes of UTF-8
  std::string_view data;  // publish only: raw JSON of the value, points into the message
  // join only: answer with the room's position ("recover":true), or also
  // deliver what came after `since` first.
  bool recover = false;
  std::optional<history_since> since;
  bool presence_events = false;  // join only: also receive presence events
  std::string_view id;           // raw JSON, empty when not given; points into the message
  [[nodiscard]] bool wants_position() const noexcept { return recover || since.has_value(); }
};

struct rooms_parse_result {
  std::optional<rooms_request> request;  // set on success
  std::string error;                     // set on failure: a human-readable reason
  std::string_view id;                   // the op's id, when one could be read (for the error's answer)
};

rooms_parse_result parse_rooms_request(std::string_view text);

// 1..max_room_name_bytes bytes, no control characters (UTF-8 is checked by
// the gateway for every text message).
bool valid_room_name(std::string_view room) noexcept;

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

// `answer` (a JSON object) with ,"id":<id> before its closing brace; as it
// is when `id` is empty.
std::string with_request_id(std::string answer, std::string_view id);

// {"joined":R} and {"left":R}: the answers to a plain join or leave that
// carried an id.
std::string rooms_joined_plain(std::string_view room);
std::string rooms_left(std::string_view room);
// {"published":R} (with ,"offset":N when numbered).
std::string rooms_published(std::string_view room, std::uint64_t offset);
// {"presence":R,"members":[{"user":U,"connections":K},...]}
std::string rooms_presence(std::string_view room, const std::vector<presence_entry>& members);
// {"room":R,"presence_event":"join"|"leave","user":U}; presence_event_prefix
// is its start for `room`, which tells an event from a delivery.
std::string rooms_presence_event(std::string_view room, bool joined, std::string_view user);

// Presence events of room R travel in a broker room of their own, so that
// only workers with listeners receive them: "\x1fpresence:" + R. Clients
// cannot name it: room names with control characters are refused.
std::string presence_events_room(std::string_view room);
// R for presence_events_room(R); nullopt for any other room.
std::optional<std::string_view> room_of_presence_events(std::string_view broker_room);

}  // namespace fg::worker
