// Diagnostic echo: every message goes straight back to its sender with the
// same opcode. Used to test and benchmark the engine with no worker.
#pragma once

#include "gateway/net/message_sink.hpp"

namespace fg::gateway {

class echo_sink final : public message_sink {
 public:
  void on_open(connection&, request_info&&) override {}
  void on_message(connection& c, ws::opcode op, std::span<const std::uint8_t> payload) override { c.send(op, payload); }
  void on_close(connection&, std::uint16_t, close_origin) override {}
};

}  // namespace fg::gateway
