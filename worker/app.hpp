// The worker app API: what a user writes to put business logic behind
// framegate. One class per app, mounted on a URL path:
//
//   class shout_app final : public fg::worker::app {
//    public:
//     void on_message(fg::worker::connection& c, fg::worker::message m) override {
//       std::string up(m.payload);
//       for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
//       api().send(c.id(), m.kind, up);
//     }
//   };
//   registry.mount("/shout", std::make_unique<shout_app>());
//
// Threading: a worker runs one event loop; every callback and every api()
// call happens on it, so apps need no locks. Callbacks must not block:
// the loop also serves every other connection of the worker.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fg::worker {

using conn_id = std::uint64_t;

enum class message_kind : std::uint8_t { text, binary };

struct message {
  message_kind kind;
  std::string_view payload;  // valid during the callback only
};

// What the gateway told the worker about a connection at its handshake.
struct connection_info {
  conn_id id = 0;
  std::string gateway_id;
  std::string path;
  std::string query;
  std::map<std::string, std::string> headers;  // lower-case names: origin, cookie, and the allow-list
  std::string subprotocol;
  std::string remote_address;
  std::string sticky_key;
  bool resumed = false;  // moved here from a failed worker, with the state below
  // Who the client is, when the gateway verifies tokens (--jwt-*): the
  // token's `sub`. Empty for an anonymous connection (no key configured,
  // or --allow-anonymous and no token).
  std::string user;
  // The token's `rooms` claim. rooms_restricted false: no claim, every
  // room is allowed (rooms_allowed is empty). true: only rooms matching
  // one of rooms_allowed (an exact name, or a prefix ending in '*'); an
  // empty list then allows none.
  bool rooms_restricted = false;
  std::vector<std::string> rooms_allowed;
};

// The state the gateway keeps for a connection so that another worker can
// carry on after a failover (see api::keep_state).
struct connection_state {
  std::vector<std::string> rooms;
  std::string app_data;
};

// A client connection as an app sees it.
class connection {
 public:
  explicit connection(connection_info info, connection_state state)
      : info_(std::move(info)), state_(std::move(state)) {}
  [[nodiscard]] conn_id id() const noexcept { return info_.id; }
  [[nodiscard]] const connection_info& info() const noexcept { return info_; }
  // The last state kept with api::keep_state (or restored on resume).
  [[nodiscard]] const connection_state& state() const noexcept { return state_; }
  connection_state& mutable_state() noexcept { return state_; }
  // Anything the app wants to hang on the connection.
  std::any user;

 private:
  connection_info info_;
  connection_state state_;
};

// Publish/subscribe between workers (and, with Redis, hosts). A payload
// published to a room reaches the handler of every worker subscribed to
// it, exactly once each, the publisher's own worker included; the runtime
// hands it to app::on_room_message of every mounted app.
// subscribe/unsubscribe set the worker's interest in a room: they are
// idempotent, not counted (an app that shares rooms between connections
// counts its local members itself and subscribes while it has any).
// Changes made during one loop turn reach the broker together, and always
// before a publish made after them.
// Where a room message sits in its room's history: the broker numbers the
// messages of each room 1, 2, 3, ... (its offset) within an epoch, a
// random id that changes whenever the room's history is lost (Redis
// restarted empty, or the room stayed quiet past --history-ttl). Offset 0:
// the broker keeps no history (--no-redis, --history-size 0) or the
// message came from outside framegate.
struct room_position {
  std::string_view epoch;
  std::uint64_t offset = 0;
};

// A room message compressed once by the worker that published it (worker
// --publish-deflate): the RFC 7692 compression of the payload's first
// `covers` bytes. An app that delivers a payload whose first `covers`
// bytes are the room message's passes it on with api::send_many, and the
// gateway sends members that negotiated permessage-deflate this
// compression with the rest of the payload appended uncompressed, instead
// of compressing the message again (common/deflate/deflated_prefix.hpp).
struct deflated_segment {
  std::string_view bytes;  // empty: none
  std::size_t covers = 0;
  [[nodiscard]] bool present() const noexcept { return !bytes.empty(); }
};

// What broker::history found for a room.
struct room_history {
  enum class outcome : std::uint8_t {
    current,        // no position asked: epoch and top only
    recovered,      // entries hold every message after the asked offset
    epoch_changed,  // the asked epoch is gone: its messages cannot be told
    trimmed,        // the history no longer reaches back to the asked offset
    ahead,          // the asked offset is above the room's top
    unavailable,    // the broker could not ask (Redis down): see error
    off,            // this broker keeps no history
  };
  struct entry {
    std::uint64_t offset = 0;
    std::string payload;  // as published
  };
  outcome result = outcome::off;
  std::string epoch;
  std::uint64_t top = 0;       // offset of the room's last message (0: none yet)
  std::vector<entry> entries;  // recovered only: top - asked offset of them, in order
  std::string error;           // unavailable only
};

// The position a client last saw, for broker::history.
struct history_since {
  std::string epoch;
  std::uint64_t offset = 0;
};

// What became of a publish (publish_options::done).
struct publish_receipt {
  bool ok = true;
  std::uint64_t offset = 0;  // its place in the room's history (0: not numbered)
  std::string error;         // !ok: why it will reach no other worker
};

struct publish_options {
  // false: not kept in the room's history and not numbered (for what only
  // live members need, such as presence events).
  bool numbered = true;
  // Called on the loop once the broker took the message (Redis
  // acknowledged it) or gave up on it.
  std::function<void(publish_receipt)> done;
  // How many leading bytes of the payload every receiving app delivers
  // unchanged (0: none). With --publish-deflate the broker compresses them
  // once here (see deflated_segment); the rooms app delivers all but the
  // last byte unchanged, which it replaces with the message's offset.
  std::size_t stable_prefix = 0;
};

// One user's connections in a room (broker::presence).
struct presence_entry {
  std::string user;
  std::uint64_t connections = 0;
};

struct presence_result {
  bool ok = false;
  std::vector<presence_entry> members;  // sorted by user
  std::string error;                    // !ok: why
};

class broker {
 public:
  virtual ~broker() = default;
  virtual void subscribe(std::string_view room) = 0;
  virtual void unsubscribe(std::string_view room) = 0;
  virtual void publish(std::string_view room, std::string_view payload) = 0;
  // publish, with a receipt and a choice of numbering.
  // (Callbacks and options are taken by value: implementations keep them
  // until the broker answers; the defaults below hand them on.)
  virtual void publish(std::string_view room, std::string_view payload, publish_options options) {
    publish(room, payload);
    if (auto done = std::move(options.done)) done(publish_receipt{});
  }
  // This worker's connections of `user` in `room` (0: none), shared with
  // every worker so that presence() counts the whole cluster. The broker
  // keeps it current across its own reconnects.
  virtual void set_presence(std::string_view /*room*/, std::string_view /*user*/, std::uint32_t /*connections*/) {}
  // Every user with connections in `room`, on every worker; `done` runs on
  // the loop (at once when the broker cannot tell).
  virtual void presence(std::string_view /*room*/, std::function<void(presence_result)> done) {
    const auto answer = std::move(done);
    answer(presence_result{false, {}, "presence needs Redis (--redis)"});
  }
  // The room's epoch and top and, with `since`, every message after it.
  // `done` runs on the loop (at once when the broker keeps no history),
  // and only after this worker's subscription to the room is in place:
  // every message above the returned top then reaches on_room_message, so
  // history and live messages meet with no gap (an app holds the live ones
  // of a recovering member until `done`, see rooms_app). Subscribe first.
  virtual void history(std::string_view /*room*/, const std::optional<history_since>& /*since*/,
                       std::function<void(room_history)> done) {
    const auto answer = std::move(done);
    answer(room_history{});
  }
};

// What apps can do. Sends are batched per loop turn and leave in one write.
class api {
 public:
  virtual ~api() = default;
  virtual void send(conn_id to, message_kind kind, std::string_view payload) = 0;
  // One payload to many connections: framed once by the gateway, the same
  // bytes written to every recipient.
  virtual void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload) = 0;
  // The same, with the publisher's compression of the payload's first
  // `pre.covers` bytes (from on_room_message): those bytes must be the
  // room message's own.
  virtual void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload,
                         deflated_segment /*pre*/) {
    send_many(to, kind, payload);
  }
  virtual void close(conn_id c, std::uint16_t code, std::string_view reason) = 0;
  // Stores `state` with the connection, here and in the gateway, so it
  // survives a crash of this worker.
  virtual void keep_state(connection& c, connection_state state) = 0;
  virtual broker& rooms() = 0;
  virtual const std::string& worker_id() const = 0;
};

// Callbacks run on the worker's loop and must not throw for ordinary bad
// input (answer the client instead); an exception that escapes one is
// logged and the connection is closed with 1011.
class app {
 public:
  virtual ~app() = default;
  // Called once when mounted, before any connection.
  virtual void attach(worker::api& a) { api_ = &a; }
  virtual void on_open(connection&) {}
  virtual void on_message(connection& c, message m) = 0;
  virtual void on_close(connection&, std::uint16_t /*code*/) {}
  // A broker delivery for a room this worker subscribed to.
  virtual void on_room_message(std::string_view /*room*/, std::string_view /*payload*/) {}
  // The same, with the message's place in the room's history; apps that
  // number their deliveries override this one (the default drops `at`).
  virtual void on_room_message(std::string_view room, std::string_view payload, room_position /*at*/) {
    on_room_message(room, payload);
  }
  // The same, with the publisher's compression when it made one; apps that
  // pass it on to api::send_many override this one.
  virtual void on_room_message(std::string_view room, std::string_view payload, room_position at,
                               deflated_segment /*pre*/) {
    on_room_message(room, payload, at);
  }
  // A message for `room` from the gateway's HTTP publish API (POST
  // /api/publish), to an app mounted at "/rooms": `data` is the raw JSON
  // value the caller sent. The app decides what members receive.
  virtual void on_api_publish(std::string_view /*room*/, std::string_view /*data*/) {}
  // The same, for a caller waiting for the receipt (the API answers with
  // each message's offset): call `done` once, when the broker took the
  // message (publish_options::done) or refused it. The default hands the
  // message to the two-argument one and answers at once, unnumbered.
  virtual void on_api_publish(std::string_view room, std::string_view data, std::function<void(publish_receipt)> done) {
    on_api_publish(room, data);
    const auto answer = std::move(done);
    answer(publish_receipt{});
  }

 protected:
  // Qualified: GCC rejects a member named like the type it returns
  // ("changes meaning of 'api'") when the type is named unqualified.
  worker::api& api() { return *api_; }

 private:
  worker::api* api_ = nullptr;
};

}  // namespace fg::worker
