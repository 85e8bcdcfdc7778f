// /shout: the example app. It answers every text message with the same
// text in upper case (ASCII letters only) and echoes binary messages.
//
// How to write an app
// -------------------
// 1. Derive from fg::worker::app (worker/app.hpp) and override the
//    callbacks you need. Only on_message is required:
//      on_open(connection&)             a client connected to your path
//      on_message(connection&, message) one complete WebSocket message;
//                                       m.payload is valid during the call only
//      on_close(connection&, code)      the client is gone (1006: no close handshake)
//      on_room_message(room, payload)   a broker delivery (see rooms_app)
// 2. Talk back through api():
//      api().send(id, kind, bytes)      one connection
//      api().send_many(ids, kind, bytes) many connections, framed once
//      api().close(id, code, reason)    close with a close frame
//      api().keep_state(c, state)       state that survives a worker crash
//      api().rooms()                    the broker: subscribe/publish
//    Sends are batched: everything sent while handling one read of the
//    link leaves in one write, so sending many small messages is cheap.
// 3. Never block: every connection of the worker shares one event loop
//    (no threads, no locks needed). Do heavy work elsewhere and send the
//    result when it is ready.
// 4. Never throw for bad client input: answer the client. (An exception
//    that escapes is logged and closes that connection with 1011.)
// 5. Mount it on a path in worker/apps/builtin.cpp:
//      registry.mount("/shout", std::make_unique<shout_app>());
//    The worker tells the gateway which paths it serves, and the gateway
//    routes a client's handshake path (ws://host/shout) to it.
#pragma once

#include <string>

#include "worker/app.hpp"

namespace fg::worker {

class shout_app final : public app {
 public:
  void on_message(connection& c, message m) override {
    if (m.kind == message_kind::binary) {
      api().send(c.id(), m.kind, m.payload);
      return;
    }
    // Only ASCII changes, so the text stays valid UTF-8 whatever it holds.
    buffer_.assign(m.payload);
    for (char& ch : buffer_)
      if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
    api().send(c.id(), message_kind::text, buffer_);
  }

 private:
  std::string buffer_;  // reused: its capacity stays, no allocation per message
};

}  // namespace fg::worker
