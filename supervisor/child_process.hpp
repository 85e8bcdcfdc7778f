// One run of a child program: started with fork and execve, its stdout and stderr
// relayed line by line, reaped without blocking. Knows nothing about
// restarting; supervised_child adds that.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <boost/asio/io_context.hpp>

#include "supervisor/line_relay.hpp"

namespace fg::supervisor {

struct child_spec {
  std::string name;                                      // "gateway", "w1": prefix of relayed lines and log messages
  std::string program;                                   // a path, or a bare name looked up in PATH
  std::vector<std::string> args;                         // after argv[0]
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the supervisor's environment
  bool json_output = false;                              // relay its lines as JSON objects (--log-format json)
};

class child_process {
 public:
  child_process(boost::asio::io_context& io, child_spec spec);
  // A child still running here would be orphaned: kill and reap it.
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // Starts one run. The child gets /dev/null as stdin, a pipe as stdout and
  // stderr, default signal dispositions, its own process group so that a
  // terminal's Ctrl-C reaches only the supervisor, which then stops the
  // children in order, and SIGTERM when the supervisor dies. Call it from the
  // supervisor's main thread: the kernel ties that SIGTERM to the thread.
  // Throws std::system_error when the program cannot start.
  void spawn(line_relay::line_handler on_line, line_relay::closed_handler on_output_closed);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const child_spec& spec() const { return spec_; }
  std::chrono::steady_clock::duration uptime() const { return std::chrono::steady_clock::now() - started_; }
  bool output_open() const;

  void send_signal(int sig) const;

  // Non-blocking: the wait status if the child has exited since the last call.
  std::optional<int> try_reap();

 private:
  boost::asio::io_context& io_;
  child_spec spec_;
  pid_t pid_ = -1;
  std::chrono::steady_clock::time_point started_{};
  std::shared_ptr<line_relay> relay_;
};

}  // namespace fg::supervisor
