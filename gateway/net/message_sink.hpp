// Where a connection's messages go: the seam between the WebSocket engine
// and what is behind it (the diagnostic echo, or the worker router).
//
// Thread-safety: each I/O thread has its own sink instance, and every call
// is made on that thread, so an implementation needs no locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/net/connection.hpp"
#include "gateway/ws/protocol.hpp"

namespace fg::gateway {

struct thread_snapshot;

// Who ended a connection.
enum class close_origin : std::uint8_t {
  client,   // the client sent a close frame
  server,   // the gateway or a worker closed it (protocol error, shutdown, policy, timeout)
  network,  // TCP died without a close handshake (1006)
};

// What the handshake told us about a connection, for routing and for apps.
struct request_info {
  std::string path;         // "/rooms"
  std::string query;        // without '?'
  std::string subprotocol;  // selected, may be empty
  std::string remote_address;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names, forwarded ones only
  // From the verified token (empty without one: no key configured, or
  // --allow-anonymous): its sub, and its rooms claim (see auth::identity).
  std::string user;
  bool rooms_restricted = false;
  std::vector<std::string> rooms_allowed;
  [[nodiscard]] const std::string* header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return &v;
    return nullptr;
  }
};

class message_sink {
 public:
  virtual ~message_sink() = default;
  // Before the handshake is answered: 0 to accept, or the HTTP status to
  // refuse with (404: no worker serves the path; 503: no worker at all),
  // with a one-line reason.
  virtual unsigned admit(const request_info&, std::string_view& reason) { return (void)reason, 0; }
  // The handshake succeeded; the connection is open.
  virtual void on_open(connection& c, request_info&& info) = 0;
  // A complete text or binary message. The payload is only valid during the
  // call (it may point into the thread's read buffer).
  virtual void on_message(connection& c, ws::opcode op, std::span<const std::uint8_t> payload) = 0;
  // The connection is gone (close code received or sent; 1006 if TCP died).
  virtual void on_close(connection& c, std::uint16_t code, close_origin origin) = 0;
  // After each read: may this session read more now? A sink whose
  // downstream is saturated says no and later calls connection::resume_reading().
  virtual bool can_read(connection&) { return true; }
  // The connection is about to close: its client sent a close frame, or
  // broke the protocol. A sink that has forwarded messages whose replies
  // are still on their way may hold the close back (return true) and call
  // connection::release_close() once they are out, so that the replies to
  // what the client sent before closing are not lost (`send(m); close()`,
  // Autobahn 3.2; RFC 6455 §5.5.1 lets an endpoint finish sending first).
  // The session reads nothing more meanwhile, and releases the close
  // itself after --close-timeout.
  virtual bool hold_close(connection&) { return false; }
  // The thread is shutting down and its connections are gone: release
  // everything that would keep the loop alive (links, listeners).
  virtual void stop() {}
  // A scrape: add what the sink counts (routing, workers) to the thread's snapshot.
  virtual void snapshot(thread_snapshot&) const {}
  // Once per --pool-shed-period: free what the sink kept for a peak of
  // connections that has passed; returns the bytes freed.
  virtual std::size_t shed_unused() { return 0; }
};

}  // namespace fg::gateway
