// Native uWebSockets peer for bench/run_echo.sh and bench/run_fanout.sh
// (PEERS kind `uws-native`), compiled by build.sh against a uWebSockets
// checkout the user supplies; no uWS code lives in this repository. It uses
// only uWS's public API: App().ws<...>, WebSocket::send/subscribe/unsubscribe,
// App::publish and listen.
//
//   uws-peer echo  [PORT] [HOST]   every message back with the same opcode, on any path
//   uws-peer rooms [PORT] [HOST]   the /rooms JSON protocol (docs/PROTOCOL.md), rooms as uWS
//                                  topics: one process, in memory, fan-out inside uWS
// PORT 0 (the default) takes any free port; HOST defaults to 127.0.0.1.
// Prints "listening on HOST:PORT" on stdout once it accepts connections.
//
// Settings, as the Node peers and framegate's gateway: no compression,
// maxPayloadLength 1 MiB, no idle timeout and no automatic pings (the idle
// benchmark holds connections that send nothing), and a backpressure limit
// high enough that uWS never skips a slow receiver: a skipped delivery would
// show as a loss, not as the latency a queue costs.
#include <App.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr unsigned max_payload = 1024 * 1024;
constexpr unsigned max_backpressure = 64 * 1024 * 1024;

struct no_user_data {};

// The /rooms request scanner: finds the raw JSON text of "op", "room" and
// "data" in one top-level object, without building a document. Values are
// kept as written: a delivery carries the publisher's "data" bytes as they
// came (as framegate does), and a room is named by its JSON string token.
class json_scan {
 public:
  explicit json_scan(std::string_view s) : s_(s) {}

  struct request {
    std::string_view op, room, data;  // raw tokens: strings with their quotes
  };

  // False if the text is not one JSON object (its values are checked only as
  // far as skipping them needs).
  bool parse(request& out) {
    space();
    if (!take('{')) return false;
    space();
    if (take('}')) return at_end();
    for (;;) {
      space();
      std::string_view key;
      if (!string(key)) return false;
      space();
      if (!take(':')) return false;
      space();
      const std::size_t start = i_;
      if (!value(0)) return false;
      const std::string_view v = s_.substr(start, i_ - start);
      if (key == "\"op\"")
        out.op = v;
      else if (key == "\"room\"")
        out.room = v;
      else if (key == "\"data\"")
        out.data = v;
      space();
      if (take(',')) continue;
      if (take('}')) return at_end();
      return false;
    }
  }

 private:
  bool at_end() {
    space();
    return i_ == s_.size();
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool string(std::string_view& out) {
    const std::size_t start = i_;
    if (!take('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '\\') {
        if (i_ == s_.size()) return false;
        ++i_;
      } else if (c == '"') {
        out = s_.substr(start, i_ - start);
        return true;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return false;
      }
    }
    return false;
  }
  // Nesting is bounded: a peer must not recurse without limit on input.
  bool value(int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    const char c = s_[i_];
    std::string_view ignored;
    if (c == '"') return string(ignored);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      space();
      if (take(close)) return true;
      for (;;) {
        space();
        if (c == '{') {
          if (!string(ignored)) return false;
          space();
          if (!take(':')) return false;
          space();
        }
        if (!value(depth + 1)) return false;
        space();
        if (take(',')) continue;
        return take(close);
      }
    }
    // A number or a literal: the run of characters that can belong to one.
    const std::size_t start = i_;
    while (i_ < s_.size() && std::string_view("+-.0123456789eEtruefalsn").find(s_[i_]) != std::string_view::npos) ++i_;
    return i_ > start;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

template <typename Behavior>
Behavior settings() {
  Behavior b;
  b.compression = uWS::DISABLED;
  b.maxPayloadLength = max_payload;
  b.idleTimeout = 0;
  b.maxBackpressure = max_backpressure;
  b.closeOnBackpressureLimit = false;
  b.resetIdleTimeoutOnSend = false;
  b.sendPingsAutomatically = false;
  return b;
}

using behavior = uWS::App::WebSocketBehavior<no_user_data>;
using peer_socket = uWS::WebSocket<false, true, no_user_data>;

void add_echo(uWS::App& app) {
  behavior b = settings<behavior>();
  b.message = [](peer_socket* ws, std::string_view message, uWS::OpCode op) { ws->send(message, op); };
  app.ws<no_user_data>("/*", std::move(b));
}

void send_error(peer_socket* ws, std::string_view what) {
  std::string text = "{\"error\":\"";
  text.append(what).append("\"}");
  ws->send(text, uWS::OpCode::TEXT);
}

void add_rooms(uWS::App& app) {
  behavior b = settings<behavior>();
  b.message = [&app](peer_socket* ws, std::string_view message, uWS::OpCode) {
    json_scan::request r;
    if (!json_scan(message).parse(r)) return send_error(ws, "invalid JSON");
    // The room token with its quotes: "" is the empty name.
    if (r.room.size() < 3 || r.room.front() != '"') return send_error(ws, "room must be a non-empty string");
    if (r.op == "\"join\"") {
      ws->subscribe(r.room);
    } else if (r.op == "\"leave\"") {
      ws->unsubscribe(r.room);
    } else if (r.op == "\"publish\"") {
      if (r.data.empty()) return send_error(ws, "publish needs \\\"data\\\"");
      std::string text = "{\"room\":";
      text.reserve(text.size() + r.room.size() + r.data.size() + 10);
      text.append(r.room).append(",\"data\":").append(r.data).append("}");
      // App::publish, not WebSocket::publish: the publisher gets its own
      // message too when it is a member, as the protocol says.
      app.publish(r.room, text, uWS::OpCode::TEXT);
    } else {
      send_error(ws, "op must be join, leave or publish");
    }
  };
  app.ws<no_user_data>("/rooms", std::move(b));
  app.any("/*", [](auto* res, auto*) { res->writeStatus("404 Not Found")->end(); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode != "echo" && mode != "rooms") {
    std::fprintf(stderr, "usage: %s echo|rooms [PORT] [HOST]\n", argv[0]);
    return 2;
  }
  const int port = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::string host = argc > 3 ? argv[3] : "127.0.0.1";

  uWS::App app;
  if (mode == "echo")
    add_echo(app);
  else
    add_rooms(app);
  app.listen(host, port, [&](us_listen_socket_t* listen_socket) {
    if (!listen_socket) {
      std::fprintf(stderr, "[uws-peer] cannot listen on %s:%d\n", host.c_str(), port);
      std::exit(1);
    }
    const int bound = us_socket_local_port(0, reinterpret_cast<us_socket_t*>(listen_socket));
    std::printf("listening on %s:%d\n", host.c_str(), bound);
    std::fflush(stdout);
    std::fprintf(stderr, "[uws-peer] %.*s mode, compression off, maxPayloadLength %u\n", static_cast<int>(mode.size()),
                 mode.data(), max_payload);
  });
  app.run();
  return 0;
}
