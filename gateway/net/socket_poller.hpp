// The sockets of one I/O thread (client connections, worker links,
// listeners), watched by one epoll set that the thread's loop waits on
// (event_loop.hpp) rather than by one Asio wait each.
//
// Why: Asio 1.74's epoll reactor never starts an async_wait speculatively;
// it re-arms the descriptor with epoll_ctl(EPOLL_CTL_MOD) every time
// (detail/impl/epoll_reactor.ipp, start_op), and allocates an operation for
// it. A connection that waits, reads and writes once per message so made
// three system calls (recv, epoll_ctl, send) where uWebSockets makes two,
// and kept ~170 B of reactor state besides. Here a socket is added once,
// edge-triggered, for reading and writing.
//
// Edge-triggered means an edge is reported once. A target that leaves bytes
// unread (its buffer filled, its read budget spent) or ignores an edge (a
// paused reader) has to remember that there may be more: no new edge will
// come for them. redeliver() hands such a target its edge again on the
// next wait, after the kernel's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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
  // Throws std::system_error when the kernel gives no epoll set.
  socket_poller();
  ~socket_poller();
  socket_poller(const socket_poller&) = delete;
  socket_poller& operator=(const socket_poller&) = delete;

  // Reports `fd`'s edges to `target` until remove(fd); false if epoll
  // refused it (errno is set).
  bool add(int fd, poll_target& target) noexcept;
  // Stops reporting `fd`, also for the edges of the batch being delivered
  // and for its redeliveries. Call it before closing `fd`.
  void remove(int fd) noexcept;
  // Reports `events` to `fd`'s target again on the next wait, which then
  // does not block: for bytes that raise no new edge.
  void redeliver(int fd, std::uint32_t events);
  [[nodiscard]] bool has_redeliveries() const noexcept { return !redeliveries_.empty(); }

  // Waits up to `timeout_ms` (-1: without a bound; 0 when a redelivery is
  // pending) for edges, and delivers one batch of them, then the
  // redeliveries. Returns how many it delivered.
  std::size_t wait(int timeout_ms);

  // The epoll set itself, for a loop that nests it in another reactor.
  [[nodiscard]] int native_handle() const noexcept { return set_; }
  [[nodiscard]] std::size_t watched() const noexcept { return watched_; }

 private:
  struct redelivery {
    int fd;
    poll_target* target;
    std::uint32_t events;
  };

  int set_;
  // By descriptor number: a removed descriptor's slot is null, so an edge of
  // the current batch for it is dropped. Descriptors are small integers the
  // kernel reuses, so this stays as large as the most sockets ever open.
  std::vector<poll_target*> targets_;
  std::vector<redelivery> redeliveries_;
  std::vector<redelivery> delivering_;  // the batch being redelivered (kept for its capacity)
  std::size_t watched_ = 0;
};

}  // namespace fg::gateway
