// Where a connection's messages go: the seam between the WebSocket engine
// and what is behind it (the diagnostic echo, or the worker router).
//
// Thread-safety: every call is made on the connection's own I/O thread;
// an implementation shared by several threads must be thread-safe or keep
// per-thread state.
#pragma once

#include <cstdint>
#include <span>

#include "gateway/ws/protocol.hpp"

namespace fg::gateway {

class session;

class message_sink {
 public:
  virtual ~message_sink() = default;
  // The handshake succeeded; the connection is open.
  virtual void on_open(session& s) = 0;
  // A complete text or binary message. The payload is only valid during the
  // call (it may point into the thread's read buffer).
  virtual void on_message(session& s, ws::opcode op, std::span<const std::uint8_t> payload) = 0;
  // The connection is gone (close code received or sent; 1006 if TCP died).
  virtual void on_close(session& s, std::uint16_t code) = 0;
};

}  // namespace fg::gateway
