// A token bucket: `rate` tokens a second, at most `burst` held.
//
// Pure: the caller passes the time (milliseconds of any monotonic clock), so
// tests drive it without sleeping. A request larger than the burst passes
// when the bucket is full and leaves it in debt, paid back before the next
// one passes: a byte budget below the largest message then still lets that
// message through, at the average rate.
//
// Not thread-safe: one owner, or the owner's lock.
#pragma once

#include <cstdint>

namespace fg::gateway {

class token_bucket {
 public:
  token_bucket() = default;  // empty, rate 0: nothing passes
  token_bucket(double rate, double burst, std::uint64_t now_ms) noexcept
      : rate_(rate), burst_(burst), tokens_(burst), last_ms_(now_ms) {}

  // Takes `n` tokens if the bucket holds them (or is full, for n > burst).
  bool try_take(double n, std::uint64_t now_ms) noexcept {
    refill(now_ms);
    if (burst_ <= 0 || tokens_ < (n < burst_ ? n : burst_)) return false;
    tokens_ -= n;
    return true;
  }

  // Milliseconds until try_take(n) would pass (0: now). Rounded up.
  [[nodiscard]] std::uint64_t wait_ms(double n, std::uint64_t now_ms) const noexcept;

  // The bucket is full: it has not been used for burst / rate seconds.
  [[nodiscard]] bool full(std::uint64_t now_ms) const noexcept { return level(now_ms) >= burst_; }

 private:
  [[nodiscard]] double level(std::uint64_t now_ms) const noexcept;
  void refill(std::uint64_t now_ms) noexcept {
    tokens_ = level(now_ms);
    if (now_ms > last_ms_) last_ms_ = now_ms;
  }

  double rate_ = 0;
  double burst_ = 0;
  double tokens_ = 0;  // negative: in debt after a request larger than the burst
  std::uint64_t last_ms_ = 0;
};

}  // namespace fg::gateway
