#pragma once
// HDR-style log-bucketed latency histogram: a fixed array of counters, no
// per-sample storage, so recording costs a few instructions and memory does
// not grow with the message count. Values below 256 are exact; above, each
// power of two is split into 128 buckets (relative error <= 0.8%).
#include <array>
#include <cstdint>

namespace loadgen {

class histogram {
 public:
  static constexpr unsigned sub_bits = 8;
  static constexpr std::uint64_t exact_limit = 1ULL << sub_bits;  // 256
  static constexpr std::uint64_t half = exact_limit / 2;          // 128
  static constexpr std::size_t bucket_count = exact_limit + (64 - sub_bits) * half;

  void record(std::uint64_t value) noexcept;
  void merge(const histogram& other) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  double mean() const noexcept;
  // Highest value equivalent to the q-quantile's bucket (as HDR reports it),
  // clamped to the exact maximum; 0 when empty.
  std::uint64_t percentile(double q) const noexcept;

  static std::size_t index_of(std::uint64_t value) noexcept;
  static std::uint64_t highest_equivalent(std::size_t index) noexcept;

 private:
  std::array<std::uint64_t, bucket_count> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  long double sum_ = 0;
};

}  // namespace loadgen
