// The sink of a gateway thread in worker mode: routes each connection to a
// worker by rendezvous hashing of its sticky key, forwards its messages
// over that worker's link, applies what workers send back, and moves
// connections to another worker when theirs dies (announced as resumed,
// with their kept state, followed by the unacknowledged messages in order).
//
// Everything here belongs to one I/O thread: each thread accepts its own
// link from every worker on <link-dir>/link-<thread>.sock.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/byte_buffer.hpp"
#include "gateway/net/broadcast_frames.hpp"
#include "gateway/net/io_thread.hpp"
#include "gateway/net/message_sink.hpp"
#include "gateway/routing/room_hub.hpp"
#include "gateway/routing/sticky_key.hpp"
#include "gateway/routing/worker_link.hpp"

namespace fg::gateway {

// A message for every member of a room, handed to a worker's broker (the
// admin publish API).
struct room_message {
  std::string room;
  std::string delivery;  // the exact text each member receives: {"room":R,"data":V}
};

class worker_router final : public message_sink {
 public:
  worker_router(io_thread& home);
  ~worker_router() override;

  unsigned admit(const request_info& req, std::string_view& reason) override;
  void on_open(session& s, request_info&& info) override;
  void on_message(session& s, ws::opcode op, std::span<const std::uint8_t> payload) override;
  void on_close(session& s, std::uint16_t code, close_origin origin) override;
  bool can_read(session& s) override;
  bool hold_failure(session& s) override;
  void stop() override;

  // From links.
  void on_envelope(worker_link& link, const framegate::link::Envelope& e);
  void on_link_lost(worker_link& lost);
  void after_link_batch();
  [[nodiscard]] std::span<std::uint8_t> link_read_buffer() noexcept { return link_read_buffer_; }
  [[nodiscard]] const gateway_config& config() const noexcept { return home_.config(); }
  [[nodiscard]] const routing_counters& counters() const noexcept { return counters_; }
  [[nodiscard]] routing_counters& mutable_counters() noexcept { return counters_; }
  void snapshot(thread_snapshot& snap) const override;

  // Admin entry points, on thread 0 only (its links reach every worker).
  // Each message goes as BrokerPublish on the link of the live worker that
  // its room name hashes to, so one room's publishes keep their order. With
  // no live worker nothing is sent and false is returned.
  bool publish_to_rooms(std::span<const room_message> messages);
  [[nodiscard]] std::size_t live_workers() const noexcept;

  // Removes stale link-*.sock files of an earlier run (call once, before the threads start).
  static void prepare_link_dir(const std::string& dir);

 private:
  struct route {
    session* s = nullptr;
    request_info info;
    std::string sticky_key;
    std::uint64_t key_hash = 0;
    std::string state;  // serialized ConnectionState kept for failover
    worker_link* link = nullptr;
    std::uint64_t last_seq = 0;  // of the last message forwarded on `link`
  };

  // What is counted per worker id; kept when its links go, so counters
  // stay monotonic across a worker's restarts.
  struct worker_tally {
    std::uint64_t routed = 0;
    std::uint64_t credit_pauses = 0;
  };

  void do_accept();
  void schedule_link_ping();
  void ping_links();
  worker_tally& tally(const worker_link& link);
  worker_link* pick(const route& r) const;
  void announce(route& r, std::uint64_t conn_id, bool resumed);
  void deliver(const framegate::link::Send& send);
  void refuse_too_big(route& r);
  void resume_paused(worker_link& link);
  void release_failures(worker_link& link, bool all);

  io_thread& home_;
  sticky_key_spec sticky_;
  std::string socket_path_;
  std::unique_ptr<
      boost::asio::basic_socket_acceptor<boost::asio::local::stream_protocol, boost::asio::io_context::executor_type>>
      acceptor_;
  std::vector<std::shared_ptr<worker_link>> links_;  // all links, registered or not
  std::unordered_map<std::uint64_t, std::unique_ptr<route>> routes_;
  std::unique_ptr<room_hub> hub_;  // thread 0 only
  broadcast_frames frames_;        // a Send, framed once per parameter set of its recipients
  std::vector<worker_link*> credit_returned_;
  routing_counters counters_;
  std::unordered_map<std::string, worker_tally> tallies_;
  boost::asio::basic_waitable_timer<std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>,
                                    boost::asio::io_context::executor_type>
      ping_timer_;
  bool stopped_ = false;
  std::array<std::uint8_t, 64 * 1024> link_read_buffer_{};
};

}  // namespace fg::gateway
