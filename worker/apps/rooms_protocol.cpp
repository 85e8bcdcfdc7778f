#include "worker/apps/rooms_protocol.hpp"

#include <utility>

#include "common/json/json_scan.hpp"
#include "common/json/json_text.hpp"

namespace fg::worker {

namespace {

rooms_parse_result failure(std::string message) { return {std::nullopt, std::move(message)}; }

}  // namespace

rooms_parse_result parse_rooms_request(std::string_view text) {
  // One streaming pass, no document, bounded depth: a hostile text costs
  // this worker no more than its own length (see json::check_syntax).
  if (auto bad = json::check_syntax(text)) return failure(std::move(*bad));

  std::string_view op_raw, room_raw, data_raw;
  const bool is_object = json::for_each_member(text, [&](std::string_view key, std::string_view value) {
    if (json::string_equals(key, "op"))
      op_raw = value;
    else if (json::string_equals(key, "room"))
      room_raw = value;
    else if (json::string_equals(key, "data"))
      data_raw = value;
  });
  if (!is_object) return failure("a message must be a JSON object like {\"op\":\"join\",\"room\":\"lobby\"}");

  if (op_raw.empty()) return failure("missing \"op\": use join, leave or publish");
  if (json::kind_of(op_raw) != json::value_kind::string)
    return failure("\"op\" must be a string: join, leave or publish");
  rooms_request req;
  const std::string op = json::decode_string(op_raw);
  if (op == "join")
    req.op = rooms_op::join;
  else if (op == "leave")
    req.op = rooms_op::leave;
  else if (op == "publish")
    req.op = rooms_op::publish;
  else
    return failure("unknown op " + json::quote(op) + ": use join, leave or publish");

  if (room_raw.empty()) return failure("missing \"room\"");
  if (json::kind_of(room_raw) != json::value_kind::string) return failure("\"room\" must be a string");
  req.room = json::decode_string(room_raw);
  if (req.room.empty()) return failure("\"room\" must not be empty");
  if (req.room.size() > max_room_name_bytes)
    return failure("\"room\" is longer than " + std::to_string(max_room_name_bytes) + " bytes");

  if (req.op == rooms_op::publish) {
    if (data_raw.empty()) return failure("publish needs \"data\" (any JSON value)");
    req.data = data_raw;
  }
  return {std::move(req), {}};
}

std::string rooms_delivery(std::string_view room, std::string_view raw_data) {
  const std::string quoted_room = json::quote(room);
  std::string out;
  out.reserve(quoted_room.size() + raw_data.size() + 18);
  out += "{\"room\":";
  out += quoted_room;
  out += ",\"data\":";
  out += raw_data;
  out += '}';
  return out;
}

std::string rooms_error(std::string_view message) { return json::error_object(message); }

}  // namespace fg::worker
