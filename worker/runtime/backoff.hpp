// Reconnect delays: exponential backoff with jitter.
//
// The n-th consecutive failure waits a random time in [d/2, d], where
// d = min(max, min * 2^n). The jitter keeps the workers of a restarted
// gateway from reconnecting in lock step; the floor of d/2 keeps a
// flapping gateway from being hammered.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace fg::worker {

class backoff {
 public:
  backoff(std::chrono::milliseconds min, std::chrono::milliseconds max, std::uint64_t seed)
      : min_(std::max(min, std::chrono::milliseconds{1})), max_(std::max(max, min_)), rng_(seed) {}

  // The delay before the next attempt; each call doubles the ceiling.
  std::chrono::milliseconds next() {
    const auto ceiling = ceiling_now();
    if (failures_ < 32) ++failures_;
    std::uniform_int_distribution<std::int64_t> pick(ceiling.count() / 2, ceiling.count());
    return std::chrono::milliseconds(pick(rng_));
  }

  // After a success: the next failure starts again from `min`.
  void reset() noexcept { failures_ = 0; }

  [[nodiscard]] unsigned failures() const noexcept { return failures_; }

 private:
  [[nodiscard]] std::chrono::milliseconds ceiling_now() const noexcept {
    auto d = min_;
    for (unsigned i = 0; i < failures_ && d < max_; ++i) d *= 2;
    return std::min(d, max_);
  }

  std::chrono::milliseconds min_;
  std::chrono::milliseconds max_;
  std::mt19937_64 rng_;
  unsigned failures_ = 0;
};

}  // namespace fg::worker
