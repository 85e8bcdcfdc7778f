// One link: the Unix stream socket from this worker to one gateway I/O
// thread (<link-dir>/link-<i>.sock).
//
// Life cycle:  connecting -> registering -> ready -> (lost) -> waiting -> connecting ...
//   connecting   async_connect to the socket path
//   registering  Register written first; waiting for Welcome (timeout)
//   ready        envelopes flow both ways
//   waiting      backoff timer (50 ms doubling to 2 s, jittered)
// Any failure (connect refused, no Welcome, EOF, write error, decode
// error) closes the socket, logs why, and goes to waiting: a link never
// gives up and never takes the worker down.
//
// Writes: queue() appends encoded envelopes to wr_batch_; flush() (once
// per loop turn, from the runtime) writes the batch: at once what the
// socket takes (link::write_now), asynchronously the rest. Only one write
// is ever in flight: queue() during a write appends to the next batch,
// which starts when the write completes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/link/codec.hpp"
#include "common/link/hot_envelopes.hpp"
#include "common/link/link_socket.hpp"
#include "common/link/write_batch.hpp"
#include "framegate/link.pb.h"
#include "worker/config.hpp"
#include "worker/runtime/backoff.hpp"

namespace fg::worker {

class gateway_link;

// Implemented by the runtime. Every call happens on the worker's loop.
class link_events {
 public:
  virtual ~link_events() = default;
  // Before each connect attempt (the runtime re-scans the link directory).
  virtual void on_link_connecting(gateway_link& l) = 0;
  virtual void on_link_ready(gateway_link& l, const framegate::link::Welcome& w) = 0;
  // Only after on_link_ready: the link is gone until the next one.
  virtual void on_link_down(gateway_link& l, std::string_view reason) = 0;
  virtual void on_link_envelope(gateway_link& l, const framegate::link::Envelope& e) = 0;
  // A client message read in place (the hot path: no Envelope is built;
  // `m.payload` points into the read buffer for the call only).
  virtual void on_link_message(gateway_link& l, const fg::link::message_view& m) = 0;
  // After the envelopes of one read.
  virtual void on_link_batch_end(gateway_link& l) = 0;
  // Around the handling of every read, whatever its outcome (also a read
  // that failed the link): what the envelopes queued can be written when
  // the read ends, instead of from a handler posted for it.
  virtual void on_link_read_begin(gateway_link& l) = 0;
  virtual void on_link_read_end(gateway_link& l) = 0;
};

struct link_stats {
  std::uint64_t connects = 0;           // Welcomes received
  std::uint64_t failures = 0;           // attempts or links that ended in an error
  std::uint64_t envelopes_dropped = 0;  // queued while the link was not up
  std::uint64_t writes = 0;             // writes started: one per loop turn at most, not one per envelope
  std::uint64_t write_waits = 0;        // of which the socket did not take whole (--link-sndbuf full)
  std::uint64_t bytes_written = 0;
  std::uint64_t bytes_read = 0;
};

class gateway_link {
 public:
  gateway_link(boost::asio::io_context& io, std::uint32_t index, std::string path, const link_options& options,
               framegate::link::Register hello, link_events& events, std::shared_ptr<spdlog::logger> log);
  gateway_link(const gateway_link&) = delete;
  gateway_link& operator=(const gateway_link&) = delete;

  void start();
  // Closes the socket; no reconnect after this.
  void stop();

  // Appends `e` to the next write; dropped (and counted) unless ready.
  void queue(const framegate::link::Envelope& e);
  // Appends Envelope{send}, encoded by hand; dropped (and counted) unless ready.
  void queue_send(std::span<const std::uint64_t> to, bool binary, std::string_view payload, deflated_segment pre);
  // Starts a write of everything queued, unless one is in flight.
  void flush();

  [[nodiscard]] bool ready() const noexcept { return state_ == state::ready; }
  [[nodiscard]] std::uint32_t index() const noexcept { return index_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const link_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::size_t output_bytes() const noexcept { return wr_batch_.pending_bytes(); }

 private:
  enum class state : std::uint8_t { idle, connecting, registering, ready, waiting, stopped };
  using socket_type = boost::asio::local::stream_protocol::socket;

  void do_connect();
  void on_connect(const boost::system::error_code& ec);
  void do_read();
  // Brackets handle_read with on_link_read_begin/end.
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void handle_read(const boost::system::error_code& ec, std::size_t n);
  void on_write(const boost::system::error_code& ec, std::size_t n);
  // After a write of the batch completed (synchronously or not).
  void on_written(std::size_t n);
  void on_welcome_timeout();
  // Handles one decoded envelope; false when it breaks the protocol.
  bool on_envelope(const framegate::link::Envelope& e);
  // Closes the socket and schedules the next attempt.
  void fail(std::string_view reason);
  // True when ready for envelopes; otherwise counts one dropped.
  bool accepting() noexcept;
  void reset_io();

  boost::asio::io_context& io_;
  std::uint32_t index_;
  std::string path_;
  link_options options_;
  framegate::link::Register hello_;
  link_events& events_;
  std::shared_ptr<spdlog::logger> log_;

  socket_type socket_;
  boost::asio::steady_timer timer_;  // welcome timeout or backoff: never both
  backoff backoff_;
  fg::link::link_send_buffer sndbuf_;  // asked for on every (re)connect
  state state_ = state::idle;
  // Bumped on every (re)connect; handlers of an older socket see a
  // different value and do nothing.
  std::uint64_t generation_ = 0;
  bool logged_waiting_ = false;  // "cannot connect" logged once per outage

  fg::link::decoder decoder_;
  // Large enough for a whole gateway batch in one read (a busy gateway
  // thread writes ~100 KiB per turn at 1 KiB messages): the replies then
  // leave in one write, and each client gets its replies in one TCP write
  // at the gateway instead of one per piece.
  static constexpr std::size_t read_buffer_bytes = 256 * 1024;
  std::unique_ptr<std::array<std::uint8_t, read_buffer_bytes>> rd_buf_;
  bool rd_paused_ = false;  // output above the high-water mark
  fg::link::write_batch wr_batch_;
  std::string fail_reason_;  // set by on_envelope for fail()

  link_stats stats_;
};

}  // namespace fg::worker
