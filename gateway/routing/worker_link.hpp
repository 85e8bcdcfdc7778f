// One gateway thread's link to one worker process: a Unix stream socket
// that carries envelopes both ways. It knows nothing of routes or credits:
// what arrives goes to link_events (the route table), what the table sends
// leaves in one write per loop turn (a flush is posted on the first append
// of the turn; one write in flight at a time), written at once as far as
// the socket takes it (link::write_now).
//
// Lifetime: shared, held by its pending socket operations; once closed,
// they complete and release it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/write_batch.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway {

class worker_link final : public link_port, public std::enable_shared_from_this<worker_link> {
 public:
  using socket_type =
      boost::asio::basic_stream_socket<boost::asio::local::stream_protocol, boost::asio::io_context::executor_type>;

  // `read_buffer` is shared by the thread's links (one read at a time);
  // `max_envelope` bounds what the worker may send; `counters` get the
  // round trip of each batch and the envelopes per write.
  worker_link(socket_type socket, link_events& events, std::span<std::uint8_t> read_buffer, std::uint32_t max_envelope,
              routing_counters& counters);

  void start();
  [[nodiscard]] bool closed() const noexcept { return closed_; }

  // link_port
  void send(const framegate::link::Envelope& e) override;
  void send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                    std::uint64_t seq) override;
  void close(std::string_view why) override;
  [[nodiscard]] std::size_t pending_bytes() const noexcept override { return out_.pending_bytes(); }

 private:
  // Reads of the shared buffer per readiness, at most (see on_readable).
  static constexpr int kReadsPerTurn = 8;

  void do_wait_read();
  void on_readable(boost::system::error_code ec);
  void on_ack(std::uint64_t seq);
  void schedule_flush();
  void flush();

  // When a batch carrying messages up to `seq` was written: its Ack gives
  // the round trip through the worker (one sample per batch, not per message).
  struct batch_time {
    std::uint64_t seq;
    std::chrono::steady_clock::time_point written;
  };

  socket_type socket_;
  link_events& events_;
  std::span<std::uint8_t> read_buffer_;
  routing_counters& counters_;
  link::decoder decoder_;
  link::write_batch out_;
  bool flush_scheduled_ = false;
  bool closed_ = false;
  std::uint64_t last_seq_ = 0;  // of the last message queued
  std::deque<batch_time> batch_times_;
};

}  // namespace fg::gateway
