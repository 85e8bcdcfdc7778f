// One event loop and everything its connections share: the read buffer,
// the cork, the buffer pool, the housekeeping tick and the session list.
// A connection never leaves its thread; post() is the only way in.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "common/byte_buffer.hpp"
#include "gateway/config.hpp"
#include "gateway/limits/per_ip_limits.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/net/accept_backoff.hpp"
#include "gateway/net/event_loop.hpp"
#include "gateway/net/message_compressor.hpp"
#include "gateway/net/message_sink.hpp"
#include "gateway/net/send_batch.hpp"
#include "gateway/net/session.hpp"
#include "gateway/net/write_wave.hpp"

namespace fg::gateway {

class io_thread;
// Makes the sink of one thread (each thread has its own: no locks).
using sink_factory = std::function<std::unique_ptr<message_sink>(io_thread&)>;

// State shared by every thread of one gateway.
struct gateway_shared {
  const gateway_config& config;
  sink_factory make_sink;
  std::string gateway_id;  // unique per process start: with it, connection ids are unique across restarts
  std::atomic<std::size_t> open_connections{0};
  std::atomic<std::uint64_t> next_session_id{1};
  // Every thread's now_ms() counts from here, so per-IP buckets shared by
  // the threads see one clock.
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  // --max-connections-per-ip / --handshake-rate; null when both are off.
  std::unique_ptr<per_ip_limits> per_ip{};
};

class io_thread {
 public:
  using acceptor_type =
      boost::asio::basic_socket_acceptor<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

  io_thread(gateway_shared& shared, unsigned index);
  ~io_thread();

  // For constructing Asio objects of this thread. To run something on it
  // from another thread, use post(): the loop may be waiting in its own
  // epoll set, where Asio's wake-up goes unheard.
  [[nodiscard]] boost::asio::io_context& context() noexcept { return io_; }
  [[nodiscard]] event_loop& loop() noexcept { return loop_; }
  // From any thread: runs `fn` on this thread.
  void post(std::function<void()> fn) { loop_.post(std::move(fn)); }
  [[nodiscard]] const gateway_config& config() const noexcept { return shared_.config; }
  [[nodiscard]] gateway_shared& shared() noexcept { return shared_; }
  [[nodiscard]] thread_counters& counters() noexcept { return counters_; }
  // On this thread: a copy of everything it counts, for a scrape.
  [[nodiscard]] thread_snapshot snapshot() const;
  [[nodiscard]] unsigned index() const noexcept { return index_; }
  [[nodiscard]] message_sink& sink() noexcept { return *sink_; }
  // Watches the sockets of the thread's open connections.
  [[nodiscard]] socket_poller& poller() noexcept { return loop_.poller(); }
  // permessage-deflate compression of this thread's sends.
  [[nodiscard]] message_compressor& compressor() noexcept { return compressor_; }
  // How the turn's end writes its clients: through io_uring, or a send each.
  [[nodiscard]] const send_batch& client_writes() const noexcept { return batch_; }

  // Takes an acceptor bound to the listen address (SO_REUSEPORT) and starts
  // the loop's thread.
  void start(acceptor_type acceptor);
  // From any thread: stop accepting, close every connection with 1001, and
  // let the loop end once they are gone (bounded by the close timeout).
  void request_shutdown();
  void join();

  // The thread's read buffer: every connection reads into it, one at a time.
  [[nodiscard]] std::span<std::uint8_t> read_buffer() noexcept { return read_buffer_; }

  // Output produced during a loop turn goes here; flushed by uncork().
  byte_buffer& cork_for(session& s);
  [[nodiscard]] std::size_t corked_bytes(const session& s) const noexcept {
    return cork_owner_ == &s ? cork_.size() : 0;
  }
  // Writes the cork: what its owner sent since it took it. The deferred
  // sessions wait for the turn's end.
  void uncork();
  // After a client's read (session::on_readable), for its replies (an
  // echo, a pong, a close). Without a ring they go at once (uncork): a
  // send each anyway. With one they wait for the turn's end, to leave with
  // the turn's other clients' in one batch; once a batch's worth waits it
  // goes at once, so that a busy turn's first replies do not wait for its
  // last reads (up to 256 of them). Behind a fan-out's long wave they go
  // at once, as without a ring.
  void after_read();
  // At the end of this turn: uncork(), and write the deferred sessions in
  // the order they were deferred, kWriteSlice of writes per turn (write_wave).
  // What the turn's several link reads queue for one client (a fan-out
  // through two workers) then leaves in one send, as uWebSockets drains
  // its pub/sub once per loop iteration.
  void uncork_at_turn_end();
  // Long enough for a closed loop's turn of replies to a hundred clients
  // to leave in one slice; a wave to a thousand takes 20-30 of them here.
  // After a cut, a slice lasts at least 3x the loop's other work between
  // (write_wave::kWriteShareOfOtherWork).
  static constexpr std::chrono::microseconds kWriteSlice{250};
  void forget_cork(const session& s) noexcept;
  // A session whose output was deferred this turn (see session::defer),
  // written at the end of the turn.
  void flush_at_end_of_turn(session_ref s) {
    deferred_.add(std::move(s));
    uncork_at_turn_end();
  }

  // The keys this thread verifies handshake tokens with; null when no
  // --jwt-* key is configured (tokens are then ignored).
  [[nodiscard]] const auth::key_set* jwt_keys() const noexcept { return jwt_keys_.get(); }
  // From any thread, after a SIGHUP reload: `keys` replaces the thread's
  // keys (handshakes from the next loop turn on use them), or, null, the
  // reload failed and the old ones stay. Thread 0 counts the outcome.
  // `applied` runs on this thread once it is done.
  void keys_reloaded(std::shared_ptr<const auth::key_set> keys, std::function<void()> applied = {});

  // Milliseconds since the loop started; 64 bits, so it never wraps.
  [[nodiscard]] std::uint64_t now_ms() const noexcept;

  void add(session& s) noexcept;
  void remove(session& s) noexcept;
  [[nodiscard]] std::size_t session_count() const noexcept { return session_count_; }

 private:
  // New connections per readiness of the listener, at most: the rest wait
  // a turn, so that a burst of connects cannot starve the open ones.
  static constexpr int kAcceptsPerTurn = 64;

  struct turn_end_uncork final : turn_end_task {
    io_thread& thread;
    bool scheduled = false;
    explicit turn_end_uncork(io_thread& t) : thread(t) {}
    void on_turn_end() override;
  };

  // The listening socket's edges reach accept_ready().
  struct listener final : poll_target {
    io_thread& thread;
    explicit listener(io_thread& t) : thread(t) {}
    void on_poll(std::uint32_t events) override;
  };

  void accept_ready();
  void close_acceptor() noexcept;
  void on_tick();
  // Every --pool-shed-period: the buffers and inflaters this thread's pools
  // did not need over the period go back (free_list.hpp), and with the
  // sessions freed since the period's peak, to the kernel once they add
  // up (memory_release.hpp).
  void shed_pools();
  [[nodiscard]] std::uint64_t pool_shed_period_ms() const noexcept;
  void begin_shutdown();

  gateway_shared& shared_;
  unsigned index_;
  boost::asio::io_context io_{1};
  event_loop loop_{io_};
  std::unique_ptr<acceptor_type> acceptor_;
  listener listener_{*this};
  boost::asio::ip::tcp listen_protocol_ = boost::asio::ip::tcp::v4();  // of accepted sockets (v4 or v6)
  turn_end_uncork turn_end_uncork_{*this};
  accept_backoff accept_backoff_{loop_, "the client listener", [this] { accept_ready(); }};
  std::optional<event_loop::timer_id> tick_;     // from start() on
  std::chrono::steady_clock::time_point epoch_;  // the gateway's (gateway_shared::epoch)
  std::chrono::milliseconds tick_interval_{100};
  std::uint64_t next_pool_shed_ms_ = 0;  // set by start(); 0 with --pool-shed-period 0
  std::thread thread_;
  std::unique_ptr<message_sink> sink_;

  std::array<std::uint8_t, 64 * 1024> read_buffer_{};
  byte_buffer cork_;
  session* cork_owner_ = nullptr;
  // uncork() and every deferred session (a tick, the shutdown).
  void flush_everything();
  // One group of the wave: the sessions' writes in one batch (send_batch),
  // then each session goes on from its socket's answer.
  void write_deferred(std::span<session_ref> group);
  // The turn's end: the cork's owner joins a wave that is short enough to
  // go in one batch, rather than writing on its own first.
  void uncork_into_wave();

  write_wave<session_ref> deferred_;
  send_batch batch_;

  session* head_ = nullptr;
  std::size_t session_count_ = 0;
  std::size_t session_peak_since_shed_ = 0;  // the most sessions at once since the last shed_pools()
  bool shutting_down_ = false;
  std::uint64_t shutdown_deadline_ms_ = 0;
  thread_counters counters_;
  message_compressor compressor_;
  std::shared_ptr<const auth::key_set> jwt_keys_;
};

}  // namespace fg::gateway
