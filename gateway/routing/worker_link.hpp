// One gateway thread's link to one worker process: a Unix stream socket
// that carries envelopes both ways. It knows nothing of routes or credits:
// what arrives goes to link_events (the route table), what the table sends
// leaves in one write per loop turn (at the turn's end), written at once as
// far as the socket takes it (link::write_now); the rest waits for the
// socket's next writable edge, one write in flight at a time.
//
// The socket is in the thread's epoll set (event_loop), not Asio's: a
// batch through a worker costs the gateway no Asio wait or re-arm.
//
// Lifetime: shared; the loop holds it from start() until it is closed.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string_view>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/write_batch.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/net/event_loop.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway {

class worker_link final : public link_port,
                          private poll_target,
                          private turn_end_task,
                          public std::enable_shared_from_this<worker_link> {
 public:
  // Takes `fd`, a connected Unix stream socket (closed with the link).
  // `read_buffer` is shared by the thread's links (one read at a time);
  // `max_envelope` bounds what the worker may send; `counters` get the
  // round trip of each batch and the envelopes per write.
  worker_link(int fd, event_loop& loop, link_events& events, std::span<std::uint8_t> read_buffer,
              std::uint32_t max_envelope, routing_counters& counters);
  ~worker_link() override;
  worker_link(const worker_link&) = delete;
  worker_link& operator=(const worker_link&) = delete;

  // Reports the link open and starts watching its socket; closes it at
  // once if the loop cannot watch it.
  void start();
  [[nodiscard]] bool closed() const noexcept { return closed_; }

  // link_port
  void send(const framegate::link::Envelope& e) override;
  stored_payload send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                              std::uint64_t seq) override;
  void close(std::string_view why) override;
  [[nodiscard]] std::size_t pending_bytes() const noexcept override { return out_.pending_bytes(); }

 private:
  // Reads of the shared buffer per readiness, at most (see on_readable).
  static constexpr int kReadsPerTurn = 8;

  void on_poll(std::uint32_t events) override;
  void on_turn_end() override;
  void on_readable(std::uint32_t events);
  void on_ack(std::uint64_t seq);
  void schedule_flush();
  void flush();
  // Writes what the socket takes of the write in flight; true when all of it is out.
  bool write_in_flight();

  // When a batch carrying messages up to `seq` was written: its Ack gives
  // the round trip through the worker (one sample per batch, not per message).
  struct batch_time {
    std::uint64_t seq;
    std::chrono::steady_clock::time_point written;
  };

  int fd_;
  event_loop& loop_;
  std::shared_ptr<worker_link> watched_self_;  // the loop's hold, from start() until closed
  link_events& events_;
  std::span<std::uint8_t> read_buffer_;
  routing_counters& counters_;
  link::decoder decoder_;
  link::write_batch out_;
  std::span<const std::uint8_t> in_flight_;  // what the socket has not taken yet of the write in flight
  bool flush_scheduled_ = false;
  bool closed_ = false;
  std::uint64_t last_seq_ = 0;  // of the last message queued
  std::deque<batch_time> batch_times_;
};

}  // namespace fg::gateway
