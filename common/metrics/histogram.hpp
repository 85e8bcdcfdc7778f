// A fixed-bucket histogram of unsigned integer observations (bytes,
// nanoseconds, counts), owned by one thread.
//
// On the data path an observation is a short scan of at most a few dozen
// bounds and two additions: no atomics, no allocation, no clock. A scrape
// copies the histogram on its owning thread (see the snapshot types of each
// component), so a reader never races the writer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace fg::metrics {

class histogram {
 public:
  // `bounds`: ascending inclusive upper bounds (Prometheus `le`), usually a
  // static array from buckets.hpp; the +Inf bucket is implicit.
  explicit histogram(std::span<const std::uint64_t> bounds) : bounds_(bounds), counts_(bounds.size() + 1, 0) {}

  void observe(std::uint64_t v) noexcept {
    const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), v);
    ++counts_[static_cast<std::size_t>(at - bounds_.begin())];
    sum_ += v;
  }

  // Adds another histogram with the same bounds (summing threads).
  void merge(const histogram& o) noexcept {
    if (o.bounds_.data() != bounds_.data()) return;
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    sum_ += o.sum_;
  }

  [[nodiscard]] std::span<const std::uint64_t> bounds() const noexcept { return bounds_; }
  // Per bucket (not cumulative); the last one is +Inf.
  [[nodiscard]] std::span<const std::uint64_t> counts() const noexcept { return counts_; }
  [[nodiscard]] std::uint64_t sum() const noexcept { return sum_; }
  [[nodiscard]] std::uint64_t count() const noexcept {
    std::uint64_t n = 0;
    for (const auto c : counts_) n += c;
    return n;
  }

 private:
  std::span<const std::uint64_t> bounds_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t sum_ = 0;
};

}  // namespace fg::metrics
