#include "gateway/admin/publish_request.hpp"

#include <nlohmann/json.hpp>

#include "common/json/json_scan.hpp"
#include "common/json/json_text.hpp"

namespace fg::gateway::admin {

namespace {

// One {"room":R,"data":V} object; `where` prefixes errors inside a batch.
bool parse_message(std::string_view raw, const std::string& where, std::vector<room_message>& out, std::string& error) {
  std::string_view room_raw, data_raw;
  const bool is_object = json::for_each_member(raw, [&](std::string_view key, std::string_view value) {
    if (json::string_equals(key, "room"))
      room_raw = value;
    else if (json::string_equals(key, "data"))
      data_raw = value;
  });
  if (!is_object) {
    error = where + "a message must be an object like {\"room\":\"lobby\",\"data\":{}}";
    return false;
  }
  if (room_raw.empty()) {
    error = where + "missing \"room\"";
    return false;
  }
  if (json::kind_of(room_raw) != json::value_kind::string) {
    error = where + "\"room\" must be a string";
    return false;
  }
  std::string room = json::decode_string(room_raw);
  if (room.empty()) {
    error = where + "\"room\" must not be empty";
    return false;
  }
  if (room.size() > max_room_name_bytes) {
    error = where + "\"room\" is longer than " + std::to_string(max_room_name_bytes) + " bytes";
    return false;
  }
  if (data_raw.empty()) {
    error = where + "missing \"data\" (any JSON value)";
    return false;
  }
  out.push_back({std::move(room), std::string(data_raw)});
  return true;
}

}  // namespace

std::string error_body(std::string_view message) { return json::error_object(message); }

publish_parse_result parse_publish_request(std::string_view body) {
  publish_parse_result result;
  // The scanner trusts its input: validate first (this also rejects invalid UTF-8).
  if (!nlohmann::json::accept(body)) {
    result.error = json::syntax_error(body);
    return result;
  }
  std::string_view messages_raw;
  const bool is_object = json::for_each_member(body, [&](std::string_view key, std::string_view value) {
    if (json::string_equals(key, "messages")) messages_raw = value;
  });
  if (!is_object) {
    result.error = "the body must be a JSON object: {\"room\":R,\"data\":V} or {\"messages\":[...]}";
    return result;
  }
  if (messages_raw.empty()) {
    if (!parse_message(body, "", result.messages, result.error)) result.messages.clear();
    return result;
  }
  if (json::kind_of(messages_raw) != json::value_kind::array) {
    result.error = "\"messages\" must be an array of {\"room\":R,\"data\":V}";
    return result;
  }
  std::size_t index = 0;
  json::for_each_element(messages_raw, [&](std::string_view element) {
    if (!result.error.empty()) return;
    parse_message(element, "messages[" + std::to_string(index++) + "]: ", result.messages, result.error);
  });
  if (!result.error.empty()) result.messages.clear();
  return result;
}

}  // namespace fg::gateway::admin
