// One hiredis async connection that keeps itself up: resolves the host
// name off the loop (host_resolver.hpp), connects (TCP or Unix socket),
// sends AUTH and SELECT when configured and waits for their answers, then
// reports ready. A failed attempt, a lost connection or a
// setup that does not finish within connect_timeout leads to a new attempt
// after an exponential backoff with jitter (backoff.hpp). A TCP connection
// whose peer stops answering (a partition: no FIN, no RST) is given up by
// the kernel after liveness_timeout (tcp_liveness.hpp), which ends it like
// any other loss. Redis does not notice such a loss: the connection's
// earlier lives are remembered (CLIENT INFO) and removed from the server
// (CLIENT KILL) once it is reached again (redis_client_identity.hpp).
//
// The owner issues commands on context() while ready() and hears of state
// changes through a listener: on_ready once per established connection,
// on_down once per loss of a connection that was ready. Pending reply
// callbacks of a lost connection run with a null reply (hiredis) before
// on_down; owners ignore null replies.
//
// Single-threaded: everything runs on the io_context it was given.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>

#include "worker/broker/host_resolver.hpp"
#include "worker/broker/redis_asio_adapter.hpp"
#include "worker/broker/redis_client_identity.hpp"
#include "worker/broker/redis_url.hpp"
#include "worker/runtime/backoff.hpp"

struct redisAsyncContext;

namespace fg::worker {

// The address of a resolved host name that an attempt made after
// `failures` failed ones connects to: IPv4 first (as hiredis orders them),
// then IPv6, each failure moving on to the next, so that an address that
// does not answer is not the only one ever tried. Empty: none.
std::string address_for_attempt(const std::vector<boost::asio::ip::address>& resolved, std::uint64_t failures);

struct redis_connection_options {
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5000};
  std::chrono::milliseconds connect_timeout{3000};  // resolve + connect + AUTH + SELECT + CLIENT INFO
  // A TCP connection silent this long is given up (tcp_liveness.hpp).
  std::chrono::milliseconds liveness_timeout{10000};
};

class redis_connection {
 public:
  class listener {
   public:
    virtual ~listener() = default;
    virtual void on_ready(redis_connection& c) = 0;
    virtual void on_down(redis_connection& c, std::string_view why) = 0;
  };

  redis_connection(boost::asio::io_context& io, redis_endpoint endpoint, std::string name,
                   const redis_connection_options& options, listener& l, std::shared_ptr<spdlog::logger> log,
                   std::uint64_t seed);
  // Frees the context; the listener hears nothing more.
  ~redis_connection();
  redis_connection(const redis_connection&) = delete;
  redis_connection& operator=(const redis_connection&) = delete;

  void start();
  void stop();

  [[nodiscard]] bool ready() const noexcept { return state_ == state::ready; }
  // Non-null while ready().
  [[nodiscard]] redisAsyncContext* context() const noexcept { return ready() ? ctx_ : nullptr; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // The wait before the attempt that made the current connection (zero
  // when the first attempt worked): how far the reconnect schedules of
  // workers that lost Redis together may be apart.
  [[nodiscard]] std::chrono::milliseconds last_wait() const noexcept { return last_wait_; }
  [[nodiscard]] std::uint64_t reconnects() const noexcept { return reconnects_; }
  // Attempts that failed (or connections lost) since the last time it was
  // ready: nonzero means the node is not answering now, which the caller
  // may act on before connect_timeout or its own deadline says so.
  [[nodiscard]] std::uint64_t failures_since_ready() const noexcept { return failures_since_ready_; }
  [[nodiscard]] const redis_io_stats& io_stats() const noexcept { return io_stats_; }

  // Tears the current connection down (as if it failed) and reconnects.
  void abort(std::string_view why);

  // Earlier lives of this connection, lost while ready, that the server
  // may still hold (with their subscriptions): each is asked to go when
  // the connection is made again, and forgotten once the server answered.
  [[nodiscard]] const std::vector<redis_client_identity>& stale() const noexcept { return stale_; }
  // Asks the server, on this ready connection, to drop `owner`'s stale
  // connections now, before `owner` is back itself (the publish connection
  // does it for the subscribe one, so that a count of subscribers it asks
  // for next does not include its own lingering subscription).
  void remove_stale_of(redis_connection& owner);
  // Stale connections the server dropped on our asking: each one a
  // partition Redis had not noticed.
  [[nodiscard]] std::uint64_t stale_removed() const noexcept { return stale_removed_; }

 private:
  enum class state { idle, resolving, connecting, setting_up, ready, waiting, stopped };

  void connect();
  // A hiredis context for `host` (an address, or ignored for a Unix socket).
  void open_context(const std::string& host);
  void schedule_retry();
  // The context is gone (or never came up): report, then retry.
  // `server_closed`: the server ended the connection (EOF), so it holds
  // nothing of it any more.
  void handle_down(std::string_view why, bool server_closed = false);
  void send_setup();
  void become_ready();

  static void on_connect_cb(const redisAsyncContext* ac, int status);
  static void on_disconnect_cb(const redisAsyncContext* ac, int status);
  static void on_setup_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_info_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_kill_reply(redisAsyncContext* ac, void* reply, void* privdata);
  // CLIENT KILL for each of owner's stale connections, on ctx_.
  void send_kills(redis_connection& owner);
  void forget_stale(std::uint64_t id);

  boost::asio::io_context& io_;
  redis_endpoint endpoint_;
  std::string name_;
  redis_connection_options options_;
  listener& listener_;
  std::shared_ptr<spdlog::logger> log_;
  backoff backoff_;
  boost::asio::steady_timer timer_;  // retry delay, or the connect/setup deadline
  host_resolver resolver_;

  redisAsyncContext* ctx_ = nullptr;
  state state_ = state::idle;
  unsigned setup_pending_ = 0;
  std::string abort_reason_;   // why abort() tore the connection down, for on_disconnect_cb
  std::uint64_t attempt_ = 0;  // invalidates the deadline of an older attempt
  bool ever_ready_ = false;
  bool failing_logged_ = false;  // one warning per outage, not one per attempt
  std::chrono::milliseconds last_wait_{0}, next_wait_{0};
  std::uint64_t reconnects_ = 0;
  std::uint64_t failures_since_ready_ = 0;
  redis_io_stats io_stats_;
  // Who the current connection is on the server (once CLIENT INFO
  // answered; TCP only: a Unix socket's peer always hears of a close).
  std::optional<redis_client_identity> identity_;
  std::vector<redis_client_identity> stale_;  // bounded by max_stale
  static constexpr std::size_t max_stale = 8;
  std::uint64_t stale_removed_ = 0;
  bool kill_refused_logged_ = false;  // one warning when CLIENT KILL is not allowed
};

}  // namespace fg::worker
