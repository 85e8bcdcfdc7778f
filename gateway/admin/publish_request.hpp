// The body of POST /api/publish, as a pure parser:
//
//   {"room":R,"data":V}                                   one message
//   {"messages":[{"room":R,"data":V}, ...]}               a batch, in order
//
// Each message is handed to the /rooms app as room R (decoded, so "r" and
// "\u0072" are one room) and V (the exact bytes the caller sent); the app
// builds what members receive, as for a WebSocket publish.
// Room names follow /rooms: a non-empty string of at most 256 bytes. A
// batch is all or nothing: one bad message rejects the request.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/routing/route_table.hpp"

namespace fg::gateway::admin {

inline constexpr std::size_t max_room_name_bytes = 256;  // as /rooms

struct publish_parse_result {
  std::vector<room_message> messages;  // on success (may be empty for an empty batch)
  std::string error;                   // on failure: one line for the caller
};

publish_parse_result parse_publish_request(std::string_view body);

// {"error":"..."}
std::string error_body(std::string_view message);

}  // namespace fg::gateway::admin
