#include "worker/runtime/backoff.hpp"

#include <gtest/gtest.h>

namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesFrom50MsToTwoSecondsWithJitterInTheUpperHalf) {
  fg::worker::backoff b(milliseconds(50), milliseconds(2000), 1);
  const long ceilings[] = {50, 100, 200, 400, 800, 1600, 2000, 2000, 2000};
  for (const long ceiling : ceilings) {
    const auto d = b.next().count();
    EXPECT_GE(d, ceiling / 2);
    EXPECT_LE(d, ceiling);
  }
}

TEST(Backoff, ResetStartsOverAndJitterVaries) {
  fg::worker::backoff b(milliseconds(50), milliseconds(2000), 7);
  for (int i = 0; i < 10; ++i) b.next();
  EXPECT_GE(b.next().count(), 1000);
  b.reset();
  EXPECT_LE(b.next().count(), 50);

  // Two workers with different seeds do not retry in lock step.
  fg::worker::backoff x(milliseconds(50), milliseconds(2000), 1), y(milliseconds(50), milliseconds(2000), 2);
  int same = 0;
  for (int i = 0; i < 20; ++i) same += x.next() == y.next() ? 1 : 0;
  EXPECT_LT(same, 10);
}

}  // namespace
