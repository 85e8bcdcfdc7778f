#include "worker/runtime/string_pool.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using fg::worker::string_pool;

TEST(StringPool, AStringGivenBackHoldsTheNextCopyInItsStorage) {
  string_pool pool;
  std::string first = pool.copy_of(std::string(1000, 'a'));
  const char* storage = first.data();
  pool.give_back(std::move(first));
  EXPECT_EQ(pool.kept(), 1u);
  const std::string second = pool.copy_of("hello");
  EXPECT_EQ(second, "hello");
  EXPECT_EQ(second.data(), storage);
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(StringPool, KeepsNeitherTooManyNorTooLargeStrings) {
  string_pool pool;
  pool.give_back(std::string(string_pool::max_kept_capacity + 1, 'x'));
  EXPECT_EQ(pool.kept(), 0u);
  for (std::size_t i = 0; i < string_pool::max_kept + 10; ++i) pool.give_back(std::string(100, 'y'));
  EXPECT_EQ(pool.kept(), string_pool::max_kept);
}

TEST(StringPool, GivesBackTheStringsAQuietPeriodDidNotNeed) {
  string_pool pool;
  for (int i = 0; i < 3; ++i) pool.give_back(std::string(1000, 'z'));
  EXPECT_EQ(pool.shed_unused(), 0u) << "the first period only starts counting";
  std::string used = pool.copy_of("busy");
  const std::size_t unused_bytes = pool.shed_unused();
  EXPECT_GE(unused_bytes, 2 * 1000u) << "two strings never needed";
  EXPECT_EQ(pool.kept(), 0u);
  pool.give_back(std::move(used));
  EXPECT_EQ(pool.kept(), 1u);
}

}  // namespace
