// What a message sink may do with a client connection. The session is the
// one real implementation; tests drive sinks with fakes (tests/fakes/).
//
// Thread-safety: a connection lives on one I/O thread and every call is
// made on that thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "gateway/ws/protocol.hpp"

namespace fg::gateway {

class broadcast_frames;

class connection {
 public:
  virtual ~connection() = default;

  [[nodiscard]] virtual std::uint64_t id() const noexcept = 0;
  // Open: handshake done, no close frame sent or received yet.
  [[nodiscard]] virtual bool is_open() const noexcept = 0;

  // Queues one message (see session::send for compression and the send-queue policy).
  virtual void send(ws::opcode op, std::span<const std::uint8_t> payload) = 0;
  // Queues a message shared with other recipients, framed once for all of them.
  virtual void send_shared(broadcast_frames& frames) = 0;
  // Starts the close handshake with `code` (a no-op unless open).
  virtual void close(std::uint16_t code, std::string_view reason) = 0;
  // Flow control: the sink said no in can_read() and now has room again.
  virtual void resume_reading() = 0;
  // Ends a close the sink held back (see message_sink::hold_close).
  virtual void release_close() = 0;

  // The sink's record for this connection (a route), set in on_open and
  // cleared in on_close: one pointer, so a message finds its route without
  // a lookup. The connection itself never reads it.
  template <class Record>
  [[nodiscard]] Record* sink_record() const noexcept {
    return static_cast<Record*>(sink_record_);
  }
  void set_sink_record(void* record) noexcept { sink_record_ = record; }

 private:
  void* sink_record_ = nullptr;
};

}  // namespace fg::gateway
