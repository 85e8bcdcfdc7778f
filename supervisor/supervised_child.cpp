#include "supervisor/supervised_child.hpp"

#include <csignal>
#include <string>

#include <unistd.h>

#include "common/logging.hpp"
#include "supervisor/exit_status.hpp"

namespace fg::supervisor {

namespace {

std::string seconds_text(std::chrono::steady_clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

// One write per line: stderr is unbuffered, and a single write keeps lines
// from different sources whole.
void write_stderr(const std::string& text) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto n = ::write(2, rest.data(), rest.size());
    if (n <= 0) return;  // nowhere to report it
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string relayed(std::string_view child, std::string_view line, bool json) {
  std::string out;
  out.reserve(child.size() + line.size() + 24);
  if (!json) {
    out.append("[").append(child).append("] ").append(line).append("\n");
    return out;
  }
  // One JSON object per line, whoever wrote it: a child's own JSON line
  // gains a "child" member; anything else (a crash message, redis-server's
  // text) becomes the "msg" of one.
  out.append(R"({"child":")").append(child).append("\"");
  if (line.size() >= 2 && line.front() == '{' && line.back() == '}') {
    if (line.size() > 2) out.append(",");
    out.append(line.substr(1)).append("\n");
    return out;
  }
  out.append(R"(,"msg":")");
  append_json_escaped(out, line);
  out.append("\"}\n");
  return out;
}

supervised_child::supervised_child(boost::asio::io_context& io, child_spec spec,
                                   std::optional<std::regex> ready_pattern, events ev)
    : process_(io, std::move(spec)),
      ready_pattern_(std::move(ready_pattern)),
      events_(std::move(ev)),
      restart_timer_(io),
      kill_timer_(io) {}

void supervised_child::start() {
  ready_this_run_ = false;
  last_line_.clear();
  process_.spawn([this](std::string_view line) { relay_line(line); },
                 [this] {
                   if (events_.on_output_closed) events_.on_output_closed();
                 });
  ++runs_;
  component_logger("supervisor")->info("started {} (pid {})", name(), process_.pid());
}

void supervised_child::relay_line(std::string_view line) {
  write_stderr(relayed(name(), line, process_.spec().json_output));
  if (!line.empty()) last_line_.assign(line);
  if (ready_pattern_ && !ready_this_run_ && !stopping_) {
    const std::string text(line);
    std::smatch match;
    if (std::regex_search(text, match, *ready_pattern_)) {
      ready_this_run_ = true;
      if (events_.on_ready) events_.on_ready(*this, match);
    }
  }
}

void supervised_child::restart_later() {
  const auto delay = backoff_.next_delay(last_uptime_);
  component_logger("supervisor")->info("restarting {} in {} ms", name(), delay.count());
  restart_timer_.expires_after(delay);
  restart_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;  // a cancel can lose the race with expiry: check the flag
    try {
      start();
    } catch (const std::exception& e) {
      component_logger("supervisor")->error("{}: {}", name(), e.what());
      last_uptime_ = {};  // a failed start keeps the backoff growing
      restart_later();
    }
  });
}

void supervised_child::stop(std::chrono::milliseconds grace, std::function<void()> done) {
  stopping_ = true;
  restart_timer_.cancel();
  if (!process_.running()) {
    done();
    return;
  }
  stop_done_ = std::move(done);
  process_.send_signal(SIGTERM);
  kill_timer_.expires_after(grace);
  kill_timer_.async_wait([this, grace](const boost::system::error_code& ec) {
    if (ec || !process_.running()) return;
    component_logger("supervisor")
        ->warn("{} (pid {}) did not exit within {} ms of SIGTERM: sending SIGKILL", name(), process_.pid(),
               grace.count());
    process_.send_signal(SIGKILL);
  });
}

void supervised_child::kill_now() {
  stopping_ = true;
  restart_timer_.cancel();
  process_.send_signal(SIGKILL);
}

void supervised_child::check_exit() {
  const pid_t pid = process_.pid();
  const auto uptime = process_.uptime();
  const auto status = process_.try_reap();
  if (!status) return;
  last_uptime_ = uptime;
  if (stop_done_) {
    kill_timer_.cancel();
    component_logger("supervisor")->info("{} (pid {}) stopped: {}", name(), pid, describe_exit(*status));
    auto done = std::move(stop_done_);
    stop_done_ = nullptr;
    done();
    return;
  }
  component_logger("supervisor")
      ->warn("{} (pid {}) {} after {}", name(), pid, describe_exit(*status), seconds_text(uptime));
  if (events_.on_exit) events_.on_exit(*this, *status);
}

}  // namespace fg::supervisor
