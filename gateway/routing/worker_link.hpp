// One gateway thread's link to one worker process (a Unix stream socket).
//
// Out: envelopes queued during a loop turn leave in one write (a flush is
// posted on the first append of the turn; one write in flight at a time).
// Messages forwarded to the worker are kept, in order, until the worker
// acknowledges them, for two reasons: credits (a saturated worker stops
// the gateway reading its clients) and replay (if the worker dies, its
// unacknowledged messages go to the connection's next worker).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"

namespace fg::gateway {

class worker_router;

class worker_link : public std::enable_shared_from_this<worker_link> {
 public:
  using socket_type =
      boost::asio::basic_stream_socket<boost::asio::local::stream_protocol, boost::asio::io_context::executor_type>;

  struct unacked {
    std::uint64_t seq;
    std::uint64_t conn_id;
    std::size_t offset;  // of the payload in unacked_bytes_
    std::uint32_t size;
    bool binary;
  };

  worker_link(worker_router& router, socket_type socket);

  void start();
  // Closes the socket; the router hears of it through on_link_lost.
  void close(std::string_view why);

  [[nodiscard]] bool registered() const noexcept { return registered_; }
  [[nodiscard]] bool closed() const noexcept { return closed_; }
  [[nodiscard]] const std::string& worker_id() const noexcept { return worker_id_; }
  [[nodiscard]] std::uint64_t worker_hash() const noexcept { return worker_hash_; }
  [[nodiscard]] bool serves(std::string_view path) const;
  // Can a client message of `payload_size` bytes travel to this worker? (Register.max_envelope)
  [[nodiscard]] bool takes(std::size_t payload_size) const noexcept {
    return max_payload_ == 0 || payload_size <= max_payload_;
  }
  [[nodiscard]] std::uint64_t max_payload() const noexcept { return max_payload_; }
  void set_registration(const framegate::link::Register& r);

  // Forwards one client message; returns its sequence number.
  std::uint64_t send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload);
  void send(const framegate::link::Envelope& e);

  // Credits: may this worker's clients read more?
  [[nodiscard]] bool has_credit() const noexcept;
  void on_ack(std::uint64_t seq);
  // Sessions paused for lack of credit, resumed when credit returns.
  std::vector<std::uint64_t>& paused() noexcept { return paused_; }

  // Messages sent but not acknowledged, oldest first (for replay).
  template <class Fn>
  void for_each_unacked(Fn&& fn) const {
    for (const auto& u : unacked_)
      fn(u.conn_id, u.binary, std::span<const std::uint8_t>(unacked_bytes_.data() + u.offset, u.size));
  }
  [[nodiscard]] std::size_t unacked_count() const noexcept { return unacked_.size(); }
  // Has the worker acknowledged every message up to `seq`?
  [[nodiscard]] bool acked(std::uint64_t seq) const noexcept { return unacked_.empty() || unacked_.front().seq > seq; }
  // Connections whose close waits for the worker to acknowledge a message
  // (see message_sink::hold_failure).
  struct failure_hold {
    std::uint64_t seq;
    std::uint64_t conn_id;
  };
  std::vector<failure_hold>& held_failures() noexcept { return held_failures_; }

 private:
  void do_wait_read();
  void on_readable(boost::system::error_code ec);
  void schedule_flush();
  void flush();

  // When a batch carrying messages up to `seq` was written: its Ack gives
  // the round trip through the worker (one sample per batch, not per message).
  struct batch_time {
    std::uint64_t seq;
    std::chrono::steady_clock::time_point written;
  };

  worker_router& router_;
  socket_type socket_;
  link::decoder decoder_;
  byte_buffer out_;      // appended during the turn
  byte_buffer writing_;  // the write in flight
  bool flush_scheduled_ = false;
  bool write_in_flight_ = false;
  bool registered_ = false;
  bool closed_ = false;

  std::string worker_id_;
  std::uint64_t worker_hash_ = 0;
  std::vector<std::string> paths_;
  std::uint64_t max_payload_ = 0;  // largest client payload the worker's envelope limit allows (0: no limit told)

  std::uint32_t queued_envelopes_ = 0;  // in out_, for the envelopes-per-write histogram
  std::deque<batch_time> batch_times_;
  std::uint64_t next_seq_ = 1;
  std::deque<unacked> unacked_;
  byte_buffer unacked_bytes_;
  std::size_t unacked_head_ = 0;  // bytes before this offset are acknowledged
  std::vector<std::uint64_t> paused_;
  std::vector<failure_hold> held_failures_;
};

}  // namespace fg::gateway
