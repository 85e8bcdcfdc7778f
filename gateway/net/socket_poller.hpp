// The open client connections of one I/O thread, watched by an epoll set of
// their own rather than by one Asio wait each.
//
// Why: Asio 1.74's epoll reactor never starts an async_wait speculatively;
// it re-arms the descriptor with epoll_ctl(EPOLL_CTL_MOD) every time
// (detail/impl/epoll_reactor.ipp, start_op), and allocates an operation for
// it. A connection that waits, reads and writes once per message so made
// three system calls (recv, epoll_ctl, send) where uWebSockets makes two,
// and kept ~170 B of reactor state besides. Here an open connection's socket
// is added once, edge-triggered, for reading and writing; the set itself is
// one descriptor in Asio's reactor, re-armed once per batch, not per socket.
//
// Edge-triggered means an edge is reported once. A target that leaves bytes
// unread (its buffer filled) or ignores an edge (a paused reader) has to
// remember that there may be more: no new edge will come for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace fg::gateway {

class poll_target {
 public:
  // `events`: the epoll mask (EPOLLIN, EPOLLOUT, EPOLLRDHUP, EPOLLERR, EPOLLHUP).
  virtual void on_poll(std::uint32_t events) = 0;

 protected:
  ~poll_target() = default;
};

class socket_poller {
 public:
  explicit socket_poller(boost::asio::io_context& io);
  ~socket_poller();
  socket_poller(const socket_poller&) = delete;
  socket_poller& operator=(const socket_poller&) = delete;

  // Starts watching the set (once the loop runs).
  void start();
  // Reports `fd`'s edges to `target` until remove(fd); false if epoll
  // refused it (errno is set).
  bool add(int fd, poll_target& target) noexcept;
  // Stops reporting `fd`, also for the edges of the batch being delivered.
  // Call it before closing `fd`.
  void remove(int fd) noexcept;
  // Stops waiting on the set, so that nothing of it keeps the loop alive.
  void stop() noexcept;

  [[nodiscard]] std::size_t watched() const noexcept { return watched_; }

 private:
  void arm();
  void deliver();

  boost::asio::posix::basic_stream_descriptor<boost::asio::io_context::executor_type> set_;
  // By descriptor number: a removed descriptor's slot is null, so an edge of
  // the current batch for it is dropped. Descriptors are small integers the
  // kernel reuses, so this stays as large as the most sockets ever open.
  std::vector<poll_target*> targets_;
  std::size_t watched_ = 0;
  bool stopped_ = false;
};

}  // namespace fg::gateway
