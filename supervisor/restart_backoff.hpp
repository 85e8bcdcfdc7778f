// When to start a crashed child again: 200 ms, doubling up to 10 s, so a child
// that crashes at start-up does not spin; back to 200 ms once a run lasted
// 30 s, so an occasional crash in a healthy child is retried quickly.
#pragma once

#include <algorithm>
#include <chrono>

namespace fg::supervisor {

class restart_backoff {
 public:
  using duration = std::chrono::milliseconds;

  static constexpr duration initial{200};
  static constexpr duration maximum{10'000};
  static constexpr duration stable_after{30'000};

  // The delay before the next start, given how long the run that just ended lasted.
  duration next_delay(std::chrono::steady_clock::duration uptime) {
    if (uptime >= stable_after) next_ = initial;
    const duration delay = next_;
    next_ = std::min(next_ * 2, maximum);
    return delay;
  }

 private:
  duration next_ = initial;
};

}  // namespace fg::supervisor
