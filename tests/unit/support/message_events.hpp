// A message handler for reader tests that records every event, and the
// events' vocabulary.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/ws/protocol.hpp"
#include "tests/unit/support/ws_frames.hpp"

namespace fg::test {

struct event {
  std::string kind;  // text, binary, ping, pong, close
  bytes payload;     // the close reason for close
  std::uint16_t code = 0;
  bool operator==(const event&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const event& e) {
  return os << "{" << e.kind << " '" << to_string(e.payload) << "' " << e.code << "}";
}

inline event ev(std::string kind, std::string_view payload, std::uint16_t code = 0) {
  return {std::move(kind), to_bytes(payload), code};
}

struct recording_handler {
  std::vector<event> events;
  std::vector<const std::uint8_t*> message_data;  // where each message's span pointed

  void on_message(ws::opcode op, std::span<std::uint8_t> p) {
    events.push_back({op == ws::opcode::text     ? "text"
                      : op == ws::opcode::binary ? "binary"
                                                 : "other",
                      {p.begin(), p.end()}});
    message_data.push_back(p.data());
  }
  void on_ping(std::span<std::uint8_t> p) { events.push_back({"ping", {p.begin(), p.end()}}); }
  void on_pong(std::span<std::uint8_t> p) { events.push_back({"pong", {p.begin(), p.end()}}); }
  void on_close(std::uint16_t code, std::string_view reason) { events.push_back({"close", to_bytes(reason), code}); }
};

}  // namespace fg::test
