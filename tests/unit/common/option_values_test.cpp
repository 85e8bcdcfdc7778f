// The command-line value conversions every binary shares.
#include "common/option_values.hpp"

#include <gtest/gtest.h>

namespace fg {
namespace {

TEST(ThreadCount, ANumberIsTakenAsItIsAndZeroMeansOnePerCore) {
  EXPECT_EQ(thread_count("3", 8), 3u);
  EXPECT_EQ(thread_count("1024", 8), 1024u);
  EXPECT_EQ(thread_count("0", 8), 8u);
  EXPECT_EQ(thread_count("0", 0), 1u);  // hardware_concurrency() may not know
}

TEST(ThreadCount, HalfIsHalfTheCoresAndAtLeastOne) {
  EXPECT_EQ(thread_count("half", 8), 4u);
  EXPECT_EQ(thread_count("half", 3), 1u);
  EXPECT_EQ(thread_count("half", 2), 1u);
  EXPECT_EQ(thread_count("half", 1), 1u);
  EXPECT_EQ(thread_count("half", 0), 1u);
  EXPECT_EQ(half_the_cores(16), 8u);
}

TEST(ThreadCount, AnythingElseIsRefused) {
  for (const char* text : {"", "-1", "1025", "2x", " 2", "Half", "half ", "0.5", "99999999999"})
    EXPECT_FALSE(thread_count(text, 8).has_value()) << text;
}

TEST(SecondsToMs, RoundsToTheNearestMillisecond) {
  EXPECT_EQ(seconds_to_ms(2.5), std::chrono::milliseconds(2500));
  EXPECT_EQ(seconds_to_ms(0.0004), std::chrono::milliseconds(0));
  EXPECT_EQ(seconds_to_ms(0.0006), std::chrono::milliseconds(1));
}

TEST(SplitList, TrimsBlanksAndDropsEmptyItems) {
  EXPECT_EQ(split_list("a, b,,c ,\t"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split_list("").empty());
}

}  // namespace
}  // namespace fg
