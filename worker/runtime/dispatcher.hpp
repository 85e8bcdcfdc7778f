// The worker's dispatch logic, apart from any socket: it keeps the table
// of client connections (each bound to the link its ConnectionOpened came
// on), routes gateway envelopes to the mounted apps, implements the app
// api by queuing envelopes on links, and acknowledges handled messages.
//
// Fairness: a Message is not handled as it is read but queued on its
// connection (a ConnectionClosed for a connection with queued messages
// waits behind them). A turn (serve_turn) visits the connections with
// queued work round-robin, handling at most turn_messages_per_connection
// messages or turn_bytes_per_connection bytes of each (at least one) and
// at most turn_messages_total in all; what is left waits for the next
// turn, which the runtime posts behind whatever else the loop has to do.
// So one connection's burst delays the others by one budget, not by the
// whole burst. Other envelopes (Opened, Ping, deliveries) are handled as
// they are read.
//
// Ordering contract (link.proto, Ack): a turn ends by queuing, per link,
// the coalesced StateUpdates and one Ack for the highest seq such that
// every Message up to it was handled, so an Ack never covers a message
// still queued, and the envelopes an app queued for a message precede
// the Ack that lets the gateway forget it.
//
// State: api::keep_state only records the state; at the end of the turn
// each changed connection gets one StateUpdate against what the gateway
// last heard: a rooms delta (a join and a leave of one room in one turn
// cancel), or the full state when app_data changed.
//
// Single-threaded: everything runs on the worker's loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/link/hot_envelopes.hpp"
#include "common/small_fifo.hpp"
#include "framegate/link.pb.h"
#include "worker/app.hpp"
#include "worker/metrics/worker_stats.hpp"
#include "worker/runtime/app_registry.hpp"
#include "worker/runtime/link_output.hpp"
#include "worker/runtime/string_pool.hpp"

namespace fg::worker {

struct dispatcher_stats {
  std::uint64_t connections_opened = 0;
  std::uint64_t connections_resumed = 0;  // of which moved here from a failed worker
  std::uint64_t connections_closed = 0;
  std::uint64_t messages_in = 0;
  std::uint64_t sends_out = 0;            // Send envelopes queued
  std::uint64_t sends_to_unknown = 0;     // recipients the worker does not know (already gone)
  std::uint64_t messages_to_unknown = 0;  // Message for a connection the worker does not know
  std::uint64_t unrouted_opens = 0;       // ConnectionOpened for a path no app serves
  std::uint64_t app_errors = 0;           // exceptions escaping an app callback
  std::uint64_t turns_deferred = 0;       // turns that ended with messages still queued
  std::uint64_t state_updates = 0;        // StateUpdate envelopes queued
  std::uint64_t unexpected_envelopes = 0;
  std::uint64_t pool_bytes_shed = 0;  // inbox payload strings a quiet period freed
  std::uint64_t memory_trims = 0;     // malloc_trim runs after a shed (memory_release.hpp)
};

class dispatcher final : public api {
 public:
  // Recipients per Send envelope; a longer send_many becomes several Sends.
  static constexpr std::size_t max_recipients_per_send = 4096;
  // Per-turn budgets (see above). Small enough that a burst of one
  // connection delays another's reply by a few milliseconds of app work;
  // large enough that a busy connection is not split into tiny turns.
  static constexpr std::size_t turn_messages_per_connection = 16;
  static constexpr std::size_t turn_bytes_per_connection = 64 * 1024;
  static constexpr std::size_t turn_messages_total = 1024;

  dispatcher(std::string worker_id, app_registry& apps, link_output& out, std::shared_ptr<spdlog::logger> log);

  // The broker apps see through api::rooms(); `listener` (may be null)
  // hears link-0 events and hub deliveries. Call before the links start.
  void set_broker(broker& b, hub_listener* listener) noexcept {
    broker_ = &b;
    hub_ = listener;
  }

  // ---- link events (from the runtime) ----
  void on_link_up(std::uint32_t link);
  // The connections of the link are gone for this worker (the gateway
  // reroutes them): apps see on_close(1006) and forget them.
  void on_link_down(std::uint32_t link);
  void on_envelope(std::uint32_t link, const framegate::link::Envelope& e);
  // A client message (read in place, or from an Envelope); its payload is
  // copied into the connection's queue.
  void on_message(std::uint32_t link, const fg::link::message_view& m);
  // After the envelopes of one read: serves a turn. True when messages
  // are still queued: the caller runs serve_turn() again in a later loop
  // turn, until it returns false.
  bool end_batch(std::uint32_t link);
  // One round over the connections with queued messages, within the
  // budgets; then the turn's StateUpdates and Acks. True when work remains.
  bool serve_turn();

  // A broker delivery: every app's on_room_message.
  void deliver_room_message(std::string_view room, std::string_view payload, room_position at = {},
                            deflated_segment pre = {});

  // ---- api ----
  void send(conn_id to, message_kind kind, std::string_view payload) override;
  void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload) override;
  void send_many(std::span<const conn_id> to, message_kind kind, std::string_view payload,
                 deflated_segment pre) override;
  void close(conn_id c, std::uint16_t code, std::string_view reason) override;
  void keep_state(connection& c, connection_state state) override;
  broker& rooms() override { return *broker_; }
  const std::string& worker_id() const override { return worker_id_; }

  [[nodiscard]] const dispatcher_stats& stats() const noexcept { return stats_; }
  // Once per period (the runtime's housekeeping): the payload strings kept
  // for reuse that the period did not need are freed, and with the entries
  // of connections gone since the period's peak, handed back to the kernel
  // once they add up (memory_release.hpp).
  void shed_unused_memory();
  // One per mounted app, in mount order.
  [[nodiscard]] const std::vector<app_stats>& per_app() const noexcept { return app_stats_; }
  [[nodiscard]] std::size_t connection_count() const noexcept { return conns_.size(); }
  // Messages read but not yet handled.
  [[nodiscard]] std::size_t queued_messages() const noexcept { return queued_; }
  // The link a connection belongs to, or -1 when unknown (for tests).
  [[nodiscard]] std::int64_t link_of(conn_id c) const noexcept;

 private:
  // A Message (or, behind messages, a ConnectionClosed) waiting for its turn.
  struct inbound {
    std::uint64_t ack_pos = 0;  // the message's place in its link's ack window
    std::uint32_t link = 0;
    bool binary = false;
    bool is_close = false;
    std::uint16_t close_code = 0;
    std::string payload;
  };
  struct entry {
    std::unique_ptr<connection> conn;  // stable address for the apps
    app* handler = nullptr;
    app_stats* counted = nullptr;  // the handler's
    std::uint32_t link = 0;
    small_fifo<inbound> inbox;  // empty for most connections: owns nothing then
    bool ready = false;         // in ready_
  };
  // The messages of a link in arrival (= seq) order from the oldest one
  // not yet handled: the Ack may cover only the handled prefix.
  struct link_ack {
    std::deque<std::pair<std::uint64_t, bool>> window;  // (seq, handled)
    std::uint64_t front_pos = 0;                        // position of window.front(); never reused
    bool pending = false;                               // `ackable` not yet acknowledged
    std::uint64_t ackable = 0;
  };

  void on_opened(std::uint32_t link, const framegate::link::ConnectionOpened& m);
  void on_closed(const framegate::link::ConnectionClosed& m);
  // Handles up to the per-connection budget of `id`'s inbox; returns the
  // messages handled.
  std::size_t serve(conn_id id, entry& e);
  // Runs the app on one message, timed from `started`; returns when it ended.
  std::chrono::steady_clock::time_point handle(conn_id id, entry& e, const inbound& item,
                                               std::chrono::steady_clock::time_point started);
  std::uint64_t track(std::uint32_t link, std::uint64_t seq);
  void mark_handled(std::uint32_t link, std::uint64_t ack_pos);
  void reset_acks(std::uint32_t link);
  void flush_states();
  void flush_acks();
  void on_api_publish(std::uint32_t link, const framegate::link::ApiPublish& p);
  void forget(conn_id id, std::uint16_t code);
  void queue_send(std::uint32_t link, std::span<const conn_id> to, message_kind kind, std::string_view payload,
                  deflated_segment pre = {});
  void queue_close(std::uint32_t link, conn_id c, std::uint16_t code, std::string_view reason);
  link_ack& ack_of(std::uint32_t link);
  // Runs an app callback; an escaping exception is logged, counted and
  // closes the connection (1011) instead of taking the worker down.
  template <class Fn>
  void guarded(conn_id c, std::uint32_t link, app_stats& counted, const char* what, Fn&& fn);
  app_stats* stats_of(const app* handler) noexcept;

  std::string worker_id_;
  app_registry& apps_;
  link_output& out_;
  std::shared_ptr<spdlog::logger> log_;
  broker* broker_ = nullptr;
  hub_listener* hub_ = nullptr;

  std::unordered_map<conn_id, entry> conns_;
  std::size_t conns_peak_since_shed_ = 0;  // the most connections at once since the last shed_unused_memory()
  std::deque<conn_id> ready_;              // connections with queued messages, in serving order
  std::size_t queued_ = 0;
  // Connections whose state changed this turn -> the state the gateway has.
  std::unordered_map<conn_id, connection_state> state_sent_;
  std::vector<link_ack> acks_;
  std::vector<std::vector<conn_id>> groups_;  // send_many scratch, one per link
  string_pool payloads_;                      // for inbox payloads
  dispatcher_stats stats_;
  std::vector<app_stats> app_stats_;
  std::vector<const app*> app_of_stats_;  // app_stats_[i] counts app_of_stats_[i]

  // Scratch envelopes, one per kind sent: mutable_x() on an envelope that
  // already holds x reuses it, so steady-state sends allocate nothing.
  // (Send is encoded by hand: link_output::queue_send.)
  framegate::link::Envelope close_env_, state_env_, ack_env_, pong_env_;
};

}  // namespace fg::worker
