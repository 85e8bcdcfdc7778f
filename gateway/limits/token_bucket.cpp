#include "gateway/limits/token_bucket.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fg::gateway {

double token_bucket::level(std::uint64_t now_ms) const noexcept {
  // A clock read on another thread may lag ours by a little: never refill backwards.
  if (now_ms <= last_ms_) return tokens_;
  const double elapsed_s = static_cast<double>(now_ms - last_ms_) / 1000.0;
  return std::min(burst_, tokens_ + elapsed_s * rate_);
}

std::uint64_t token_bucket::wait_ms(double n, std::uint64_t now_ms) const noexcept {
  const double missing = std::min(n, burst_) - level(now_ms);
  if (burst_ <= 0 || (missing > 0 && rate_ <= 0)) return UINT64_MAX;
  if (missing <= 0) return 0;
  return static_cast<std::uint64_t>(std::ceil(missing / rate_ * 1000.0));
}

}  // namespace fg::gateway
