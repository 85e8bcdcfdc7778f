// Which worker serves which connection, and everything that follows from
// it, without a socket: one gateway thread's routes, its workers' credits,
// the sessions paused for lack of credit, the closes held for replies,
// and failover (a lost worker's connections move to the next worker by the
// same hash, announced as resumed with their kept state, followed by its
// unacknowledged messages in order).
//
// It is the thread's message_sink (sessions call it) and the links'
// link_events (worker links call it); worker_router wires it to real
// sockets. Tests drive it with fake connections and links.
//
// Thread-safety: one instance per I/O thread; every call on that thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/byte_buffer.hpp"
#include "gateway/config.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/net/broadcast_frames.hpp"
#include "gateway/net/message_sink.hpp"
#include "gateway/routing/api_receipts.hpp"
#include "gateway/routing/link_port.hpp"
#include "gateway/routing/room_hub.hpp"
#include "gateway/routing/sticky_key.hpp"
#include "gateway/routing/unacked_ledger.hpp"

namespace fg::gateway {

// A message for every member of a room, from the admin publish API.
struct room_message {
  std::string room;
  std::string data;  // the raw JSON value, as the caller sent it
};

// Where the publish API's messages go: the app mounted here builds what
// members receive.
inline constexpr std::string_view publish_api_path = "/rooms";

// The largest envelope a worker may send this gateway: a client-sized
// message plus its envelope (told to workers in Welcome).
std::uint32_t max_worker_envelope(const gateway_config& config);

// Who this table is, for Welcome and connection announcements.
struct route_table_identity {
  std::string gateway_id;
  unsigned thread_index = 0;  // thread 0 also runs the room hub and serves the admin API
};

class route_table : public message_sink, public link_events {
 public:
  // `flush_clients` writes what the table queued for clients (the thread's
  // cork), at once or when the loop's turn ends; it is called after each
  // link batch and after a failover.
  route_table(const gateway_config& config, route_table_identity identity, message_compressor& compressor,
              std::function<void()> flush_clients);
  ~route_table() override;
  route_table(const route_table&) = delete;
  route_table& operator=(const route_table&) = delete;

  // message_sink: the connections of this thread.
  unsigned admit(const request_info& req, std::string_view& reason) override;
  void on_open(connection& c, request_info&& info) override;
  void on_message(connection& c, ws::opcode op, std::span<const std::uint8_t> payload) override;
  void on_close(connection& c, std::uint16_t code, close_origin origin) override;
  bool can_read(connection& c) override;
  bool hold_close(connection& c) override;
  void stop() override;
  void snapshot(thread_snapshot& snap) const override;
  std::size_t shed_unused() override;

  // link_events: the workers' links to this thread.
  void on_link_opened(link_port& link) override;
  void on_link_envelope(link_port& link, const framegate::link::Envelope& e) override;
  void on_link_send(link_port& link, const fg::link::send_view& send) override;
  void on_link_batch_end() override;
  void on_link_lost(link_port& link, std::string_view why) override;

  // Link supervision, every --link-ping: a worker heard of since the last
  // tick is alive; one silent for --link-timeout, or not reading its link
  // (output beyond max_link_backlog), is cut off and treated as dead (its
  // connections fail over). Then a health Ping goes to every registered
  // worker (its Pong gives the link's round trip, and proves it alive).
  void tick(std::chrono::steady_clock::time_point now);

  // Admin entry points, on thread 0 only (its links reach every worker).
  // Each message goes as ApiPublish on the link of the live worker serving
  // publish_api_path that its room name hashes to, so one room's publishes
  // keep their order. Nothing is sent when no worker serves the path, when
  // a message is larger than its worker's envelope limit takes (its
  // --max-envelope: the link would be closed), or when a chosen worker's
  // link already holds more than credit_bytes of output (the queue to a
  // slow worker stays bounded).
  // With `receipts`, each message asks its worker for a receipt (the
  // offset of a numbered message), and `receipts` runs on this thread once
  // all are in, or failed: its worker went away, or did not answer within
  // 4 × --link-timeout (api_receipts.hpp). Only when the result is sent.
  enum class publish_result : std::uint8_t { sent, no_worker, too_big, busy };
  publish_result publish_to_rooms(std::span<const room_message> messages, api_receipts_fn receipts = {});
  [[nodiscard]] std::size_t live_workers() const noexcept;

  [[nodiscard]] std::size_t receipts_pending() const noexcept { return receipts_.pending(); }
  [[nodiscard]] routing_counters& counters() noexcept { return counters_; }
  [[nodiscard]] const routing_counters& counters() const noexcept { return counters_; }

 private:
  // Connections whose close waits for their worker to acknowledge a
  // message (see message_sink::hold_close).
  struct close_hold {
    std::uint64_t seq;
    std::uint64_t conn_id;
  };

  // One worker as this thread knows it: its link, what it registered,
  // what it has not acknowledged, and who waits on it.
  struct worker {
    link_port* link = nullptr;
    bool registered = false;
    std::string id;
    std::uint64_t hash = 0;
    std::vector<std::string> paths;
    std::uint64_t max_payload = 0;  // largest client payload its envelope limit allows (0: no limit told)
    unacked_ledger unacked;
    std::vector<std::uint64_t> paused;  // sessions paused for lack of credit
    std::vector<close_hold> held;
    // Supervision (tick): heard of since the last tick, and when last so.
    bool heard = true;
    std::chrono::steady_clock::time_point last_heard{};

    [[nodiscard]] bool serves(std::string_view path) const;
    [[nodiscard]] bool takes(std::size_t payload_size) const noexcept {
      return max_payload == 0 || payload_size <= max_payload;
    }
  };

  // One per open connection: most of a worker-mode connection's memory in
  // the gateway, so the request is kept as the serialized Opened (one
  // exact-size block) rather than as request_info's dozen fields.
  struct route {
    connection* conn = nullptr;
    worker* to = nullptr;
    std::uint64_t key_hash = 0;
    std::uint64_t last_seq = 0;  // of the last message forwarded to `to`
    std::string opened;          // the Opened first announced, without gateway_id: a failover announces it again
    std::string state;           // serialized ConnectionState kept for failover
  };

  // What is counted per worker id; kept when its links go, so counters
  // stay monotonic across a worker's restarts.
  struct worker_tally {
    std::uint64_t routed = 0;
    std::uint64_t credit_pauses = 0;
  };

  worker* find(const link_port& link) const noexcept;
  worker* pick(std::uint64_t key_hash, const std::string& path) const;
  worker_tally& tally(const worker& w);
  [[nodiscard]] bool has_credit(const worker& w) const noexcept;

  void on_register(worker& w, const framegate::link::Register& r);
  void forward(route& r, std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload);
  // Sends `e` (an Opened) to r.to, stamped with this gateway's id.
  void announce(route& r, framegate::link::Envelope& e);
  // The link's worker, marked as heard from; null (and the link closed)
  // when it is unknown, or sends anything but Register first.
  worker* heard_from(link_port& link, bool is_register);
  void deliver(const fg::link::send_view& send);
  void deliver(const framegate::link::Send& send);
  void on_state(const framegate::link::StateUpdate& u);
  void on_ack(worker& w, std::uint64_t seq);
  void refuse_too_big(route& r);
  void resume_paused(worker& w);
  void release_holds(worker& w, bool all);
  void fail_over(const worker& lost, std::span<const std::uint64_t> orphans);
  void reject_for(std::span<const std::uint64_t> conn_ids, worker_rejection why);
  void reject_for(const fg::link::send_view& send, worker_rejection why);
  void close_rejected(std::uint64_t conn_id);
  void ping_links();
  [[nodiscard]] std::size_t max_link_backlog() const noexcept { return 4 * config_.credit_bytes; }

  const gateway_config& config_;
  route_table_identity identity_;
  sticky_key_spec sticky_;
  std::function<void()> flush_clients_;
  std::vector<std::unique_ptr<worker>> workers_;     // one per open link, registered or not
  std::unordered_map<std::uint64_t, route> routes_;  // a node each: connections hold pointers
  std::unique_ptr<room_hub> hub_;                    // thread 0 only
  broadcast_frames frames_;                          // a Send, framed once per parameter set of its recipients
  byte_buffer reencoded_;                            // a Send the fast reader declined, in the form it reads
  std::vector<worker*> credit_returned_;
  routing_counters counters_;
  api_receipt_book receipts_;
  std::unordered_map<std::string, worker_tally> tallies_;
  bool stopped_ = false;
};

}  // namespace fg::gateway
