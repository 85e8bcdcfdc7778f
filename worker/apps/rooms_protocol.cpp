#include "worker/apps/rooms_protocol.hpp"

#include <algorithm>
#include <utility>

#include "common/json/json_scan.hpp"
#include "common/json/json_text.hpp"

namespace fg::worker {

namespace {

rooms_parse_result failure(std::string message, std::string_view id = {}) {
  return {std::nullopt, std::move(message), id};
}

// Offsets are JSON integers from 0; larger than any offset Redis hands out
// (10^14) is refused rather than rounded.
std::optional<std::uint64_t> parse_offset(std::string_view raw) {
  if (raw.empty() || raw.size() > 15) return std::nullopt;
  if (raw.size() > 1 && raw[0] == '0') return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : raw) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// "since":{"epoch":E,"offset":N}; an error message, or nothing when fine.
std::optional<std::string> parse_since(std::string_view raw, history_since& out) {
  static constexpr std::string_view usage = "\"since\" must be {\"epoch\":<string>,\"offset\":<integer>}";
  if (json::kind_of(raw) != json::value_kind::object) return std::string(usage);
  std::string_view epoch_raw, offset_raw;
  json::for_each_member(raw, [&](std::string_view key, std::string_view value) {
    if (json::string_equals(key, "epoch"))
      epoch_raw = value;
    else if (json::string_equals(key, "offset"))
      offset_raw = value;
  });
  if (epoch_raw.empty() || json::kind_of(epoch_raw) != json::value_kind::string || offset_raw.empty())
    return std::string(usage);
  out.epoch = json::decode_string(epoch_raw);
  if (out.epoch.empty() || out.epoch.size() > 64) return std::string("\"since\": \"epoch\" must be 1 to 64 bytes");
  const std::optional<std::uint64_t> offset = parse_offset(offset_raw);
  if (!offset) return std::string("\"since\": \"offset\" must be an integer from 0 to 99999999999999");
  out.offset = *offset;
  return std::nullopt;
}

}  // namespace

bool valid_room_name(std::string_view room) noexcept {
  return !room.empty() && room.size() <= max_room_name_bytes &&
         std::none_of(room.begin(), room.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20; });
}

rooms_parse_result parse_rooms_request(std::string_view text) {
  // One streaming pass, no document, bounded depth: a hostile text costs
  // this worker no more than its own length (see json::check_syntax).
  if (auto bad = json::check_syntax(text)) return failure(std::move(*bad));

  std::string_view op_raw, room_raw, data_raw, recover_raw, since_raw, events_raw, id_raw;
  const bool is_object = json::for_each_member(text, [&](std::string_view key, std::string_view value) {
    if (json::string_equals(key, "op"))
      op_raw = value;
    else if (json::string_equals(key, "room"))
      room_raw = value;
    else if (json::string_equals(key, "data"))
      data_raw = value;
    else if (json::string_equals(key, "recover"))
      recover_raw = value;
    else if (json::string_equals(key, "since"))
      since_raw = value;
    else if (json::string_equals(key, "presence_events"))
      events_raw = value;
    else if (json::string_equals(key, "id"))
      id_raw = value;
  });
  if (!is_object) return failure("a message must be a JSON object like {\"op\":\"join\",\"room\":\"lobby\"}");
  if (!id_raw.empty()) {
    const auto kind = json::kind_of(id_raw);
    if ((kind != json::value_kind::number && kind != json::value_kind::string) || id_raw.size() > max_request_id_bytes)
      return failure("\"id\" must be a number or a string of at most " + std::to_string(max_request_id_bytes) +
                     " bytes");
  }
  // From here on, failures are answered with the id.
  const auto fail = [&](std::string message) { return failure(std::move(message), id_raw); };

  if (op_raw.empty()) return fail("missing \"op\": use join, leave, publish or presence");
  if (json::kind_of(op_raw) != json::value_kind::string)
    return fail("\"op\" must be a string: join, leave, publish or presence");
  rooms_request req;
  const std::string op = json::decode_string(op_raw);
  if (op == "join")
    req.op = rooms_op::join;
  else if (op == "leave")
    req.op = rooms_op::leave;
  else if (op == "publish")
    req.op = rooms_op::publish;
  else if (op == "presence")
    req.op = rooms_op::presence;
  else
    return fail("unknown op " + json::quote(op) + ": use join, leave, publish or presence");

  if (room_raw.empty()) return fail("missing \"room\"");
  if (json::kind_of(room_raw) != json::value_kind::string) return fail("\"room\" must be a string");
  req.room = json::decode_string(room_raw);
  if (req.room.empty()) return fail("\"room\" must not be empty");
  if (req.room.size() > max_room_name_bytes)
    return fail("\"room\" is longer than " + std::to_string(max_room_name_bytes) + " bytes");
  if (!valid_room_name(req.room)) return fail("\"room\" must not contain control characters");

  if (req.op == rooms_op::publish) {
    if (data_raw.empty()) return fail("publish needs \"data\" (any JSON value)");
    req.data = data_raw;
  }
  if (req.op == rooms_op::join) {
    if (!recover_raw.empty()) {
      if (json::kind_of(recover_raw) != json::value_kind::boolean) return fail("\"recover\" must be true or false");
      req.recover = recover_raw == "true";
    }
    if (!events_raw.empty()) {
      if (json::kind_of(events_raw) != json::value_kind::boolean)
        return fail("\"presence_events\" must be true or false");
      req.presence_events = events_raw == "true";
    }
    if (!since_raw.empty() && since_raw != "null") {
      history_since since;
      if (auto bad = parse_since(since_raw, since)) return fail(std::move(*bad));
      req.since = std::move(since);
    }
  }
  req.id = id_raw;
  return {std::move(req), {}, id_raw};
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

std::string rooms_delivery_at(std::string_view delivery, std::uint64_t offset) {
  if (delivery.empty() || delivery.back() != '}') return std::string(delivery);
  const std::string n = std::to_string(offset);
  std::string out;
  out.reserve(delivery.size() + 10 + n.size());
  out.append(delivery.substr(0, delivery.size() - 1)).append(",\"offset\":").append(n).append("}");
  return out;
}

std::string rooms_joined(std::string_view room, const room_history& h, bool asked_since) {
  using outcome = room_history::outcome;
  std::string out = "{\"joined\":" + json::quote(room);
  const auto position = [&] { out += ",\"epoch\":" + json::quote(h.epoch) + ",\"offset\":" + std::to_string(h.top); };
  const auto not_recovered = [&](std::string_view reason) {
    if (asked_since) out += ",\"recovered\":false";
    out += ",\"reason\":" + json::quote(reason);
  };
  switch (h.result) {
    case outcome::current: position(); break;
    case outcome::recovered:
      position();
      out += ",\"recovered\":true";
      break;
    case outcome::epoch_changed:
      position();
      not_recovered("the room's history was lost (new epoch)");
      break;
    case outcome::trimmed:
      position();
      not_recovered("the history no longer reaches back to that offset");
      break;
    case outcome::ahead:
      position();
      not_recovered("that offset is ahead of the room");
      break;
    case outcome::unavailable: not_recovered("history unavailable: " + h.error); break;
    case outcome::off:
      out += ",\"history\":false";
      not_recovered("history is off (no Redis, or --history-size 0)");
      break;
  }
  out += '}';
  return out;
}

std::string rooms_error(std::string_view message) { return json::error_object(message); }

std::string with_request_id(std::string answer, std::string_view id) {
  if (id.empty() || answer.empty() || answer.back() != '}') return answer;
  answer.pop_back();
  answer.append(",\"id\":").append(id).append("}");
  return answer;
}

std::string rooms_joined_plain(std::string_view room) { return "{\"joined\":" + json::quote(room) + "}"; }
std::string rooms_left(std::string_view room) { return "{\"left\":" + json::quote(room) + "}"; }

std::string rooms_published(std::string_view room, std::uint64_t offset) {
  std::string out = "{\"published\":" + json::quote(room);
  if (offset != 0) out += ",\"offset\":" + std::to_string(offset);
  return out + "}";
}

std::string rooms_presence(std::string_view room, const std::vector<presence_entry>& members) {
  std::string out = "{\"presence\":" + json::quote(room) + ",\"members\":[";
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"user\":" + json::quote(members[i].user) + ",\"connections\":" + std::to_string(members[i].connections) +
           "}";
  }
  return out + "]}";
}

std::string rooms_presence_event(std::string_view room, bool joined, std::string_view user) {
  return "{\"room\":" + json::quote(room) + ",\"presence_event\":" + (joined ? "\"join\"" : "\"leave\"") +
         ",\"user\":" + json::quote(user) + "}";
}

namespace {
constexpr std::string_view presence_events_prefix = "\x1fpresence:";
}  // namespace

std::string presence_events_room(std::string_view room) { return std::string(presence_events_prefix).append(room); }

std::optional<std::string_view> room_of_presence_events(std::string_view broker_room) {
  if (!broker_room.starts_with(presence_events_prefix)) return std::nullopt;
  return broker_room.substr(presence_events_prefix.size());
}

}  // namespace fg::worker
