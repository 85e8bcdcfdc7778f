// The gateway process: N I/O threads, each with its own acceptor on the
// listen address (SO_REUSEPORT lets the kernel spread new connections), and
// the signal handling that drains them on SIGINT/SIGTERM (and reloads the
// token keys on SIGHUP).
#pragma once

#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "gateway/config.hpp"
#include "gateway/net/io_thread.hpp"
#include "gateway/net/message_sink.hpp"

namespace fg::gateway {

class server {
 public:
  server(const gateway_config& config, sink_factory make_sink);
  ~server();

  // Binds every acceptor (throws std::system_error with a clear message if
  // the address is taken) and starts the threads.
  void start();
  // The bound port (useful with --listen HOST:0).
  [[nodiscard]] unsigned short port() const noexcept { return port_; }
  // Blocks until SIGINT/SIGTERM, then closes every connection with 1001
  // and waits for the threads (bounded by the close timeout).
  // With a --jwt-* key, SIGHUP reloads the keys meanwhile (reload_keys).
  void run_until_signal();
  // Reads the --jwt-* files again and hands the new keys to every thread;
  // on failure logs why and keeps the old ones. True if the new keys are in use.
  bool reload_keys();
  // Starts the same drain from code (tests, embedding).
  void request_shutdown();
  void join();

  [[nodiscard]] thread_counters totals() const;
  [[nodiscard]] std::vector<std::unique_ptr<io_thread>>& threads() noexcept { return threads_; }

 private:
  void wait_for_reload();

  gateway_shared shared_;
  // Installed before the threads start, so a signal that arrives the moment
  // the gateway is listening still drains instead of killing the process.
  boost::asio::io_context signals_io_{1};
  boost::asio::signal_set signals_{signals_io_, SIGINT, SIGTERM};
  // SIGHUP, only with a --jwt-* key: without, SIGHUP keeps its default action.
  std::unique_ptr<boost::asio::signal_set> reload_signal_;
  std::vector<std::unique_ptr<io_thread>> threads_;
  unsigned short port_ = 0;
};

}  // namespace fg::gateway
