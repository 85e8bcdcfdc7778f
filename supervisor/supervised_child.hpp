// A child the supervisor keeps alive: one child_process plus its restart
// backoff, an optional readiness line to watch for, and a bounded stop
// (SIGTERM, then SIGKILL after a grace period). The cluster decides *whether*
// to restart; this class knows *how*. A new kind of child (e.g. a private
// redis-server) is one more instance with its own spec and ready pattern.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "supervisor/child_process.hpp"
#include "supervisor/restart_backoff.hpp"

namespace fg::supervisor {

// A line of child `child` as the supervisor writes it to its stderr:
// "[w1] line", or with `json` one JSON object per line.
std::string relayed(std::string_view child, std::string_view line, bool json);

class supervised_child {
 public:
  struct events {
    std::function<void(supervised_child&, const std::smatch&)> on_ready;  // ready pattern seen in this run
    std::function<void(supervised_child&, int wait_status)> on_exit;      // exited while not being stopped
    std::function<void()> on_output_closed;
  };

  supervised_child(boost::asio::io_context& io, child_spec spec, std::optional<std::regex> ready_pattern, events ev);

  // Starts a run now. Throws std::system_error when the program cannot start.
  void start();
  // Starts the next run after the backoff delay (logged); a failed spawn is
  // retried the same way.
  void restart_later();
  // SIGTERM (or nothing, if not running), SIGKILL after `grace`; `done` runs
  // once the child has been reaped. Cancels any pending restart.
  void stop(std::chrono::milliseconds grace, std::function<void()> done);
  // SIGKILL now, e.g. on a second Ctrl-C; `done` of stop() still follows.
  void kill_now();
  // Reaps the child if it exited (called on every SIGCHLD).
  void check_exit();

  const std::string& name() const { return process_.spec().name; }
  pid_t pid() const { return process_.pid(); }
  unsigned runs() const { return runs_; }
  // The last line the current (or last) run wrote: its error, once it has
  // exited and its output is drained.
  const std::string& last_line() const { return last_line_; }
  bool output_open() const { return process_.output_open(); }

 private:
  void relay_line(std::string_view line);

  child_process process_;
  std::optional<std::regex> ready_pattern_;
  events events_;
  restart_backoff backoff_;
  boost::asio::steady_timer restart_timer_;
  boost::asio::steady_timer kill_timer_;
  std::function<void()> stop_done_;                    // set while waiting for a stopped child to exit
  bool stopping_ = false;                              // no more restarts or readiness events
  std::chrono::steady_clock::duration last_uptime_{};  // of the run that ended last
  bool ready_this_run_ = false;
  std::string last_line_;
  unsigned runs_ = 0;
};

}  // namespace fg::supervisor
