#include "gateway/limits/token_bucket.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using fg::gateway::token_bucket;

TEST(token_bucket, starts_full_and_passes_a_burst) {
  token_bucket b(10, 3, 1000);
  EXPECT_TRUE(b.try_take(1, 1000));
  EXPECT_TRUE(b.try_take(1, 1000));
  EXPECT_TRUE(b.try_take(1, 1000));
  EXPECT_FALSE(b.try_take(1, 1000));
}

TEST(token_bucket, refills_at_the_rate_up_to_the_burst) {
  token_bucket b(10, 3, 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_take(1, 0));
  EXPECT_FALSE(b.try_take(1, 99));  // 0.99 of a token
  EXPECT_TRUE(b.try_take(1, 100));
  EXPECT_FALSE(b.try_take(1, 100));
  // A long pause fills it to the burst, no more.
  EXPECT_TRUE(b.full(10'000));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_take(1, 10'000));
  EXPECT_FALSE(b.try_take(1, 10'000));
}

TEST(token_bucket, wait_ms_says_when_the_next_token_comes) {
  token_bucket b(4, 1, 0);
  EXPECT_EQ(b.wait_ms(1, 0), 0u);
  EXPECT_TRUE(b.try_take(1, 0));
  EXPECT_EQ(b.wait_ms(1, 0), 250u);
  EXPECT_EQ(b.wait_ms(1, 200), 50u);
  EXPECT_EQ(b.wait_ms(1, 250), 0u);
}

// A request above the burst passes on a full bucket and leaves a debt: the
// average rate holds.
TEST(token_bucket, a_request_larger_than_the_burst_passes_when_full_then_pays_back) {
  token_bucket b(1000, 100, 0);
  EXPECT_TRUE(b.try_take(500, 0));
  EXPECT_FALSE(b.try_take(1, 0));
  EXPECT_FALSE(b.try_take(1, 400));  // -400 + 400 = 0 tokens
  EXPECT_TRUE(b.try_take(1, 401));
  EXPECT_FALSE(b.full(401));
  EXPECT_TRUE(b.full(1000));
  EXPECT_FALSE(b.try_take(500, 500));  // not full yet: no second overdraft
}

TEST(token_bucket, time_that_goes_backwards_refills_nothing) {
  token_bucket b(10, 1, 1000);
  EXPECT_TRUE(b.try_take(1, 1000));
  EXPECT_FALSE(b.try_take(1, 500));
  EXPECT_TRUE(b.try_take(1, 1100));
}

TEST(token_bucket, an_empty_bucket_passes_nothing) {
  token_bucket b;
  EXPECT_FALSE(b.try_take(1, 0));
  EXPECT_EQ(b.wait_ms(1, 0), UINT64_MAX);
}

}  // namespace
