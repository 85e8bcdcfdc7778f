#include "common/shrink_buckets.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <unordered_map>

namespace {

using table = std::unordered_map<std::uint64_t, int>;

table holding(std::uint64_t n) {
  table t;
  for (std::uint64_t i = 0; i < n; ++i) t.emplace(i, 0);
  return t;
}

void keep_first(table& t, std::uint64_t n) {
  for (auto it = t.begin(); it != t.end();) it = it->first >= n ? t.erase(it) : std::next(it);
}

TEST(ShrinkBuckets, AWaveThatLeftHandsItsBucketsBack) {
  table t = holding(15'000);
  const std::size_t peak = t.bucket_count();
  keep_first(t, 100);
  const std::size_t freed = fg::shrink_buckets(t);
  EXPECT_LT(t.bucket_count(), peak / 10);
  EXPECT_EQ(freed, (peak - t.bucket_count()) * sizeof(void*));
  EXPECT_EQ(t.size(), 100u);
  for (std::uint64_t i = 0; i < 100; ++i) EXPECT_TRUE(t.contains(i)) << i;
}

TEST(ShrinkBuckets, AChurnBelowItsPeakKeepsItsBuckets) {
  // A few percent under the peak: a rehash there would be undone by the
  // next arrivals, at the cost of a walk over every element.
  table t = holding(15'000);
  const std::size_t peak = t.bucket_count();
  keep_first(t, 13'500);
  EXPECT_EQ(fg::shrink_buckets(t), 0u);
  EXPECT_EQ(t.bucket_count(), peak);
}

TEST(ShrinkBuckets, ASmallTableIsLeftAlone) {
  table t = holding(100);
  const std::size_t buckets = t.bucket_count();
  t.clear();
  ASSERT_LE(buckets, fg::shrink_buckets_floor * fg::shrink_buckets_slack);
  EXPECT_EQ(fg::shrink_buckets(t), 0u);
  EXPECT_EQ(t.bucket_count(), buckets);
}

TEST(ShrinkBuckets, AnEmptiedTableShrinksToAlmostNothing) {
  table t = holding(5'000);
  t.clear();
  EXPECT_GT(fg::shrink_buckets(t), 0u);
  EXPECT_LE(t.bucket_count(), fg::shrink_buckets_floor);
}

}  // namespace
