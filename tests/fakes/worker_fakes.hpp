// Fakes for the worker's seams: the app api, the broker, a link output
// and the hub port. They record what they are asked to do, so a test can
// drive an app or the dispatcher and look at exactly what would have gone
// to the gateway.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/send_encoder.hpp"
#include "framegate/link.pb.h"
#include "worker/app.hpp"
#include "worker/runtime/link_output.hpp"
#include "worker/runtime/send_bytes.hpp"

namespace fg::worker::fakes {

class fake_broker final : public broker {
 public:
  struct publication {
    std::string room;
    std::string payload;
    bool numbered = true;
    std::size_t stable_prefix = 0;
  };

  void subscribe(std::string_view room) override {
    calls.push_back("subscribe " + std::string(room));
    subscribed.insert(std::string(room));
  }
  void unsubscribe(std::string_view room) override {
    calls.push_back("unsubscribe " + std::string(room));
    subscribed.erase(std::string(room));
  }
  void publish(std::string_view room, std::string_view payload) override {
    published.push_back({std::string(room), std::string(payload)});
  }
  // Recorded like the plain one; the receipt waits for answer_publish().
  void publish(std::string_view room, std::string_view payload, publish_options options) override {
    published.push_back({std::string(room), std::string(payload), options.numbered, options.stable_prefix});
    if (options.done) receipts.push_back(std::move(options.done));
  }
  void answer_publish(publish_receipt r) {
    auto done = std::move(receipts.front());
    receipts.erase(receipts.begin());
    done(std::move(r));
  }
  void set_presence(std::string_view room, std::string_view user, std::uint32_t connections) override {
    presence_calls.push_back(std::string(room) + " " + std::string(user) + "=" + std::to_string(connections));
  }
  // Answered at once with `presence_answer`.
  void presence(std::string_view room, std::function<void(presence_result)> done) override {
    presence_asked.emplace_back(room);
    done(presence_answer);
  }
  std::vector<std::function<void(publish_receipt)>> receipts;
  std::vector<std::string> presence_calls;  // "room user=n"
  std::vector<std::string> presence_asked;
  presence_result presence_answer{true, {}, {}};

  // Recorded; the test answers with answer_history().
  void history(std::string_view room, const std::optional<history_since>& since,
               std::function<void(room_history)> done) override {
    history_calls.push_back({std::string(room), since, std::move(done)});
  }
  struct history_call {
    std::string room;
    std::optional<history_since> since;
    std::function<void(room_history)> done;
  };
  // Answers the oldest unanswered history call with `h`.
  void answer_history(room_history h) {
    auto call = std::move(history_calls.front());
    history_calls.erase(history_calls.begin());
    call.done(std::move(h));
  }

  std::vector<history_call> history_calls;
  std::vector<std::string> calls;
  std::set<std::string> subscribed;
  std::vector<publication> published;
};

// An api that records; connections are whatever the test creates.
class fake_api final : public api {
 public:
  struct sent {
    std::vector<conn_id> to;
    message_kind kind;
    std::string payload;
    std::string deflated;  // send_many's publisher compression (bytes), if any
    std::size_t covers = 0;
  };
  struct closed {
    conn_id id;
    std::uint16_t code;
    std::string reason;
  };

  void send(conn_id to, message_kind kind, std::string_view payload) override {
    sends.push_back({{to}, kind, std::string(payload), {}, 0});
  }
  void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload) override {
    sends.push_back({{to.begin(), to.end()}, kind, std::string(payload), {}, 0});
  }
  void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload,
                 deflated_segment pre) override {
    sends.push_back({{to.begin(), to.end()}, kind, std::string(payload), std::string(pre.bytes), pre.covers});
  }
  void close(conn_id c, std::uint16_t code, std::string_view reason) override {
    closes.push_back({c, code, std::string(reason)});
  }
  void keep_state(connection& c, connection_state state) override {
    c.mutable_state() = state;
    kept.emplace_back(c.id(), std::move(state));
  }
  broker& rooms() override { return broker_; }
  const std::string& worker_id() const override { return id_; }

  fake_broker& fake_rooms() { return broker_; }

  std::vector<sent> sends;
  std::vector<closed> closes;
  std::vector<std::pair<conn_id, connection_state>> kept;

 private:
  fake_broker broker_;
  std::string id_ = "w-test";
};

// Records every envelope queued, by link.
class fake_link_output final : public link_output {
 public:
  struct queued {
    std::uint32_t link;
    framegate::link::Envelope envelope;
  };

  void queue(std::uint32_t index, const framegate::link::Envelope& e) override { log.push_back({index, e}); }
  // Recorded as the gateway would read it: encoded by hand, parsed by the
  // generated code (so every dispatcher test also checks encode_send).
  void queue_send(std::uint32_t index, std::span<const std::uint64_t> to, bool binary, std::string_view payload,
                  deflated_segment pre) override {
    byte_buffer bytes;
    link::encode_send(bytes, to, binary, byte_span(payload), send_compression_of(pre));
    link::decoder d;
    int decoded = 0;
    d.feed(bytes.span(), [&](const framegate::link::Envelope& e) {
      log.push_back({index, e});
      ++decoded;
    });
    if (decoded != 1) throw std::logic_error("encode_send made bytes the generated code does not read");
  }

  // Envelopes queued on `link`, in order.
  [[nodiscard]] std::vector<framegate::link::Envelope> on(std::uint32_t link) const {
    std::vector<framegate::link::Envelope> out;
    for (const auto& q : log)
      if (q.link == link) out.push_back(q.envelope);
    return out;
  }
  void clear() { log.clear(); }

  std::vector<queued> log;
};

// Link 0 as a hub broker sees it; end_turn() runs the end-of-turn hooks
// the way the runtime does before it writes.
class fake_hub_port final : public hub_port {
 public:
  [[nodiscard]] bool hub_ready() const override { return ready; }
  void send_to_hub(const framegate::link::Envelope& e) override {
    if (ready) sent.push_back(e);
  }
  void at_end_of_turn(std::function<void()> fn) override { hooks.push_back(std::move(fn)); }

  void end_turn() {
    while (!hooks.empty()) {
      auto run = std::move(hooks);
      hooks.clear();
      for (auto& fn : run) fn();
    }
  }

  bool ready = true;
  std::vector<framegate::link::Envelope> sent;
  std::vector<std::function<void()>> hooks;
};

// A connection as the runtime would create it.
inline connection make_connection(conn_id id, std::string path = "/rooms", bool resumed = false,
                                  connection_state state = {}) {
  connection_info info;
  info.id = id;
  info.path = std::move(path);
  info.resumed = resumed;
  return connection(std::move(info), std::move(state));
}

}  // namespace fg::worker::fakes
