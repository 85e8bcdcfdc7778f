// The local cluster: a private redis-server (unless --redis or --no-redis),
// then (once Redis is ready) one gateway, then (once it listens) N workers;
// restarts whatever crashes; on SIGINT/SIGTERM/SIGHUP stops the gateway
// first (it drains its clients), then the workers, then Redis (the workers
// publish until the end), each bounded by --stop-timeout.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "supervisor/options.hpp"
#include "supervisor/supervised_child.hpp"

namespace fg::supervisor {

class cluster {
 public:
  cluster(boost::asio::io_context& io, const supervisor_options& opts, std::string link_dir);

  // Starts the gateway; io.run() then drives everything and returns when the
  // cluster has stopped. Throws std::system_error if the gateway cannot start.
  void start();
  // 0 after a requested stop, 1 when start-up failed, 2 (config_error_exit)
  // when a child rejected its configuration (an option, a secret file, a
  // port that is taken).
  int exit_code() const { return exit_code_; }

 private:
  enum class phase { starting, running, stopping, draining, done };

  child_spec redis_spec() const;
  child_spec gateway_spec() const;
  child_spec worker_spec(unsigned index) const;
  std::vector<std::pair<std::string, std::string>> child_env() const;
  [[nodiscard]] bool json_output() const noexcept { return opts_.logging.format == "json"; }
  supervised_child::events child_events();

  void wait_for_signals();
  void wait_for_child_exits();
  void start_gateway();
  void on_ready(supervised_child& child, const std::smatch& match);
  void on_exit(supervised_child& child, int wait_status);
  void begin_stop(int exit_code);
  void stop_workers();
  void stop_redis();
  void drain_output();
  void finish();
  void report_config_failure() const;

  boost::asio::io_context& io_;
  const supervisor_options& opts_;
  std::string link_dir_;
  std::string redis_socket_;  // of the private redis-server; empty without one
  std::string redis_url_;     // what the children get as FRAMEGATE_REDIS; empty: none
  boost::asio::signal_set stop_signals_;
  boost::asio::signal_set child_signals_;
  boost::asio::steady_timer start_timer_;
  boost::asio::steady_timer drain_timer_;
  std::unique_ptr<supervised_child> redis_;
  std::unique_ptr<supervised_child> gateway_;
  std::vector<std::unique_ptr<supervised_child>> workers_;
  phase phase_ = phase::starting;
  std::size_t workers_stopping_ = 0;
  int exit_code_ = 0;
  const supervised_child* config_failure_ = nullptr;  // the child whose configuration error stopped us
};

}  // namespace fg::supervisor
