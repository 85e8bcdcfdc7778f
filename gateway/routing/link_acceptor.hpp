// Where one gateway thread waits for its workers: a Unix socket in the
// link directory (<link-dir>/link-<thread>.sock). Every worker connects
// to every thread's socket; each accepted connection becomes a worker_link
// that reports to `events` (the route table), which takes it from there
// (registration, routes, credits).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "common/link/link_socket.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/net/accept_backoff.hpp"
#include "gateway/net/event_loop.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway {

class link_acceptor final : private poll_target {
 public:
  // Binds `socket_path` (an earlier run's socket there is replaced) and
  // starts accepting in `loop`'s epoll set; throws std::system_error when
  // it cannot listen. `max_envelope` bounds what each worker may send;
  // each link's socket asks for a send buffer of `sndbuf` bytes.
  link_acceptor(event_loop& loop, std::string socket_path, std::uint32_t max_envelope, int sndbuf, link_events& events,
                routing_counters& counters);
  ~link_acceptor();
  link_acceptor(const link_acceptor&) = delete;
  link_acceptor& operator=(const link_acceptor&) = delete;

  // Stops accepting and removes the socket file; links already open stay.
  void stop();

  // Removes stale link-*.sock files of an earlier run (call once, before the threads start).
  static void prepare_link_dir(const std::string& dir);

 private:
  using acceptor_type =
      boost::asio::basic_socket_acceptor<boost::asio::local::stream_protocol, boost::asio::io_context::executor_type>;

  void on_poll(std::uint32_t events) override;  // connects waiting
  void accept_all();
  bool from_this_user(int fd);

  event_loop& loop_;
  std::string socket_path_;
  std::uint32_t max_envelope_;
  link::link_send_buffer sndbuf_;
  link_events& events_;
  routing_counters& counters_;
  acceptor_type acceptor_;
  accept_backoff backoff_;
  bool stopped_ = false;
  // Shared by this thread's links: one read at a time, decoded before the next.
  std::array<std::uint8_t, 64 * 1024> read_buffer_{};
};

}  // namespace fg::gateway
