#include "common/metrics/histogram.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "common/metrics/buckets.hpp"

namespace {

using fg::metrics::histogram;

constexpr std::array<std::uint64_t, 3> bounds{10, 100, 1000};

std::vector<std::uint64_t> counts(const histogram& h) { return {h.counts().begin(), h.counts().end()}; }

TEST(Histogram, AnObservationLandsInTheFirstBucketWhoseBoundHoldsIt) {
  histogram h(bounds);
  for (const std::uint64_t v : {0u, 10u, 11u, 100u, 101u, 1000u, 1001u, 5000u}) h.observe(v);
  // le=10: 0, 10; le=100: 11, 100; le=1000: 101, 1000; +Inf: 1001, 5000
  EXPECT_EQ(counts(h), (std::vector<std::uint64_t>{2, 2, 2, 2}));
  EXPECT_EQ(h.count(), 8u);
  EXPECT_EQ(h.sum(), 0u + 10 + 11 + 100 + 101 + 1000 + 1001 + 5000);
}

TEST(Histogram, MergeAddsHistogramsOfTheSameLayout) {
  histogram a(bounds), b(bounds);
  a.observe(5);
  b.observe(50);
  b.observe(50000);
  a.merge(b);
  EXPECT_EQ(counts(a), (std::vector<std::uint64_t>{1, 1, 0, 1}));
  EXPECT_EQ(a.sum(), 50055u);
}

TEST(Histogram, MergeIgnoresAnotherLayout) {
  histogram a(bounds), other(fg::metrics::buckets::count);
  other.observe(3);
  a.merge(other);
  EXPECT_EQ(a.count(), 0u);
}

TEST(Histogram, SharedLayoutsAreAscending) {
  for (const auto layout : {std::span<const std::uint64_t>(fg::metrics::buckets::latency_ns),
                            std::span<const std::uint64_t>(fg::metrics::buckets::size_bytes),
                            std::span<const std::uint64_t>(fg::metrics::buckets::count)})
    for (std::size_t i = 1; i < layout.size(); ++i) EXPECT_LT(layout[i - 1], layout[i]);
}

}  // namespace
