#include "gateway/config.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace {

using fg::gateway::duration_problem;

TEST(DurationProblem, AcceptsAnythingAboveZeroUpToADay) {
  EXPECT_EQ(duration_problem(0.001), "");
  EXPECT_EQ(duration_problem(30), "");
  EXPECT_EQ(duration_problem(86400), "");
}

TEST(DurationProblem, RefusesZeroNegativeAndNaN) {
  EXPECT_NE(duration_problem(0), "");
  EXPECT_NE(duration_problem(-1), "");
  EXPECT_NE(duration_problem(std::numeric_limits<double>::quiet_NaN()), "");
}

// 30 days once wrapped 32-bit milliseconds and fired at once; a value that
// large is refused rather than held.
TEST(DurationProblem, RefusesMoreThanADay) {
  EXPECT_NE(duration_problem(86400.5), "");
  EXPECT_NE(duration_problem(2592000), "");
  EXPECT_NE(duration_problem(std::numeric_limits<double>::infinity()), "");
}

}  // namespace
