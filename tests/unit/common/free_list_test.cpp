#include "common/free_list.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using fg::free_list;

free_list<int> holding(int n) {
  free_list<int> l;
  for (int i = 0; i < n; ++i) l.give(int{i});
  return l;
}

TEST(FreeList, TakesTheLastGivenFirst) {
  free_list<int> l = holding(3);
  EXPECT_EQ(l.take(), 2);
  EXPECT_EQ(l.take(), 1);
  EXPECT_EQ(l.size(), 1u);
}

TEST(FreeList, ShedsNothingInItsFirstPeriod) {
  // What was given during the period may be needed again at once: only a
  // whole period unused counts.
  free_list<int> l = holding(5);
  EXPECT_EQ(l.shed_unused(), 0u);
  EXPECT_EQ(l.size(), 5u);
}

TEST(FreeList, ShedsWhatAWholePeriodLeftUnused) {
  free_list<int> l = holding(5);
  l.shed_unused();  // the period starts with five free
  const int a = l.take();
  const int b = l.take();  // at most two in use at once: three never needed
  l.give(int{a});
  l.give(int{b});
  std::vector<int> freed;
  EXPECT_EQ(l.shed_unused([&](const int& i) { freed.push_back(i); }), 3u);
  EXPECT_EQ(l.size(), 2u);
  // The least recently used go: the front, not the two just given back.
  EXPECT_EQ(freed, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(l.take(), b);
}

TEST(FreeList, ASteadyLoadKeepsWhatItDrawsOn) {
  free_list<int> l = holding(4);
  l.shed_unused();
  for (int period = 0; period < 5; ++period) {
    std::vector<int> out;
    for (int i = 0; i < 4; ++i) out.push_back(l.take());  // every item used each period
    for (int v : out) l.give(int{v});
    EXPECT_EQ(l.shed_unused(), 0u) << "period " << period;
  }
  EXPECT_EQ(l.size(), 4u);
}

TEST(FreeList, AQuietListIsEmptiedAfterTwoPeriods) {
  free_list<std::unique_ptr<int>> l;
  for (int i = 0; i < 3; ++i) l.give(std::make_unique<int>(i));
  EXPECT_EQ(l.shed_unused(), 0u);
  EXPECT_EQ(l.shed_unused(), 3u);
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.shed_unused(), 0u);
}

}  // namespace
