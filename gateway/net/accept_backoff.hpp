// What a listener does when accept() fails for want of descriptors or
// memory: rest instead of spinning on accept, and try again on a timer.
// The connections queued meanwhile raise no new readiness edge (the set
// is edge-triggered), so the timer is what takes them once descriptors
// free up. Logged once per episode, not once per retry. Both of a gateway
// thread's listeners use it: the clients' and the workers' link socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "gateway/net/event_loop.hpp"

namespace fg::gateway {

class accept_backoff {
 public:
  static constexpr std::chrono::milliseconds retry_after{100};

  // `listener` names it in the log; `retry` accepts again (on the loop's thread).
  accept_backoff(event_loop& loop, std::string listener, std::function<void()> retry);
  ~accept_backoff();
  accept_backoff(const accept_backoff&) = delete;
  accept_backoff& operator=(const accept_backoff&) = delete;

  // Resting: the listener does not accept until the timer calls retry.
  [[nodiscard]] bool resting() const noexcept { return timer_.has_value(); }
  // accept() failed with errno `err`: rest for retry_after.
  void rest(int err);
  // An accept worked: the episode, if any, is over.
  void accepted();
  // Rests so far (every retry that failed again counts).
  [[nodiscard]] std::uint64_t rests() const noexcept { return rests_; }

 private:
  event_loop& loop_;
  std::string listener_;
  std::function<void()> retry_;
  std::optional<event_loop::timer_id> timer_;
  bool failing_ = false;  // since the last accept that worked
  std::uint64_t rests_ = 0;
};

}  // namespace fg::gateway
