#include "histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace loadgen {

std::size_t histogram::index_of(std::uint64_t value) noexcept {
  if (value < exact_limit) return static_cast<std::size_t>(value);
  const unsigned top_bit = 63U - static_cast<unsigned>(std::countl_zero(value));
  const unsigned shift = top_bit - (sub_bits - 1);  // value >> shift lies in [half, 2*half)
  return static_cast<std::size_t>(exact_limit + (shift - 1) * half + ((value >> shift) - half));
}

std::uint64_t histogram::highest_equivalent(std::size_t index) noexcept {
  if (index < exact_limit) return index;
  const std::uint64_t k = index - exact_limit;
  const std::uint64_t shift = k / half + 1;
  const std::uint64_t lower = (k % half + half) << shift;
  return lower + ((1ULL << shift) - 1);
}

void histogram::record(std::uint64_t value) noexcept {
  ++counts_[index_of(value)];
  ++count_;
  max_ = std::max(max_, value);
  min_ = std::min(min_, value);
  sum_ += static_cast<long double>(value);
}

void histogram::merge(const histogram& other) noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
  sum_ += other.sum_;
}

double histogram::mean() const noexcept {
  return count_ ? static_cast<double>(sum_ / static_cast<long double>(count_)) : 0.0;
}

std::uint64_t histogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto target = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  target = std::clamp<std::uint64_t>(target, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    seen += counts_[i];
    if (seen >= target) return std::min(highest_equivalent(i), max_);
  }
  return max_;
}

}  // namespace loadgen
