// The loop of one I/O thread: one epoll set (socket_poller) for every
// socket the thread keeps for long (client connections once open, worker
// links, the listeners), timers of its own, and Asio for everything else.
//
// Why a loop of our own: with the set nested in Asio's reactor, each batch
// cost three system calls where uWebSockets makes one: Asio's epoll_wait
// (the set became readable), the set's own epoll_wait, and Asio's
// epoll_ctl re-arming the set (Asio 1.74 starts no wait speculatively).
// Here the thread blocks in the set's epoll_wait directly.
//
// Asio still runs what is short-lived or rare: handlers posted to the
// thread, HTTP handshakes and refusals (Beast reads through Asio), a
// write the socket did not take at once. While any of that is outstanding
// the loop waits in Asio, with the set nested in its reactor as before;
// once Asio has nothing outstanding (io_context::poll() stops it), the
// loop waits in the set, and post() rings the set's own doorbell, since
// Asio's would go unheard.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "gateway/net/socket_poller.hpp"

namespace fg::gateway {

// Work that waits for the end of the loop's turn, once every edge of the
// batch was handled: a link's write of what the batch queued for it.
class turn_end_task {
 public:
  virtual void on_turn_end() = 0;

 protected:
  ~turn_end_task() = default;
};

class event_loop final : private poll_target {
 public:
  using clock = std::chrono::steady_clock;
  using timer_id = std::size_t;

  explicit event_loop(boost::asio::io_context& io);
  ~event_loop();
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  [[nodiscard]] socket_poller& poller() noexcept { return poller_; }
  [[nodiscard]] boost::asio::io_context& context() noexcept { return io_; }

  // From any thread: runs `fn` on the loop's thread. (A bare asio::post to
  // context() from another thread would not wake a loop waiting in its set.)
  void post(std::function<void()> fn);

  // On the loop's thread. Runs `fn` every `interval`, the first time one
  // interval from now, until cancel(); the returned id stays valid until then.
  timer_id every(std::chrono::milliseconds interval, std::function<void()> fn);
  // Changes a timer's interval; its next run is one new interval from now.
  void reschedule(timer_id id, std::chrono::milliseconds interval);
  void cancel(timer_id id) noexcept;

  // Which turn-end work goes first. A write that hands another process its
  // work (a batch to a worker) goes before the turn's client writes: the
  // worker then works while this thread writes, instead of after. In a
  // busy fan-out those writes take milliseconds, and a publish read in the
  // turn waited for all of them before it left for its worker.
  enum class turn_end_order : std::uint8_t { first, last };

  // Runs `task` once at the end of this turn (or of the next, if called
  // between turns), every `first` task before any `last` one, each group
  // in the order it was added; the loop holds it until then.
  void at_turn_end(std::shared_ptr<turn_end_task> task, turn_end_order order = turn_end_order::last);
  // Runs `task` at the end of the next turn, and keeps that turn's wait from
  // blocking: for work cut into pieces, so that the edges that came in the
  // meantime are handled between them.
  void at_next_turn_end(std::shared_ptr<turn_end_task> task);
  // Keeps `owner` alive until the turn ends: for an object that ends itself
  // while callers up the stack may still use it.
  void release_at_turn_end(std::shared_ptr<void> owner);

  // Runs turns until stop(). Then returns; handlers Asio still holds stay
  // there (io_context::run() finishes them).
  void run();
  // One turn: Asio's ready handlers, the due timers, one wait for edges
  // (bounded by the next timer and by `max_wait_ms` unless -1), and the
  // turn's end. run() is these in a loop; tests drive them one by one.
  void run_one_turn(int max_wait_ms = -1);
  // How long the next wait may block, in milliseconds (-1: until an edge):
  // 0 with edges to redeliver or next-turn work, else until the next timer.
  [[nodiscard]] int next_wait_ms() const;
  // On the loop's thread: run() returns once this turn ends.
  void stop() noexcept { stopping_ = true; }

 private:
  struct timer {
    clock::time_point due;
    std::chrono::milliseconds interval;
    std::function<void()> fn;
    bool live = false;
  };

  void on_poll(std::uint32_t events) override;  // the doorbell
  // Runs what Asio has ready, and learns whether it has anything outstanding.
  void run_asio();
  void wait_in_asio(int timeout_ms);
  void fire_due_timers();
  // Milliseconds to the next timer (rounded up), -1 without one.
  [[nodiscard]] int ms_to_next_timer() const;
  void end_turn();

  boost::asio::io_context& io_;
  socket_poller poller_;
  int doorbell_ = -1;  // eventfd
  // The set as one descriptor of Asio's reactor (a duplicate of it), for
  // the waits while Asio has work outstanding.
  boost::asio::posix::basic_stream_descriptor<boost::asio::io_context::executor_type> nested_;
  bool nested_wait_pending_ = false;
  bool asio_idle_ = false;
  bool stopping_ = false;
  std::vector<timer> timers_;
  std::vector<std::shared_ptr<turn_end_task>> turn_end_first_;
  std::vector<std::shared_ptr<turn_end_task>> turn_end_;
  std::vector<std::shared_ptr<turn_end_task>> next_turn_end_;
  std::vector<std::shared_ptr<turn_end_task>> ending_;  // the batch being run (kept for its capacity)
  std::vector<std::shared_ptr<void>> released_;
};

}  // namespace fg::gateway
