#include "common/small_fifo.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using fg::small_fifo;

std::vector<int> contents(const small_fifo<int>& q) { return {q.begin(), q.end()}; }

TEST(SmallFifo, AnEmptyQueueOwnsNoMemory) {
  const small_fifo<std::string> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.capacity(), 0u);
}

TEST(SmallFifo, ItemsLeaveInTheOrderTheyCame) {
  small_fifo<int> q;
  for (int i = 1; i <= 3; ++i) q.push_back(i);
  EXPECT_EQ(contents(q), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.front(), 1);
  q.pop_front();
  q.push_back(4);
  EXPECT_EQ(contents(q), (std::vector<int>{2, 3, 4}));
  std::vector<int> taken;
  while (!q.empty()) {
    taken.push_back(q.front());
    q.pop_front();
  }
  EXPECT_EQ(taken, (std::vector<int>{2, 3, 4}));
}

TEST(SmallFifo, ADrainedQueueKeepsASmallBufferAndDropsALargeOne) {
  small_fifo<int, 4> q;
  q.push_back(1);
  q.pop_front();
  EXPECT_TRUE(q.empty());
  EXPECT_GE(q.capacity(), 1u);  // the next message needs no allocation
  EXPECT_LE(q.capacity(), 4u);
  for (int i = 0; i < 100; ++i) q.push_back(i);
  while (!q.empty()) q.pop_front();
  EXPECT_EQ(q.capacity(), 0u);  // a burst's buffer does not stay with an idle connection
}

TEST(SmallFifo, AQueueThatNeverDrainsStaysBounded) {
  small_fifo<int> q;
  // One in, one out, always one left behind: without compaction the
  // buffer would hold every item ever pushed.
  q.push_back(0);
  for (int i = 1; i <= 10'000; ++i) {
    q.push_back(i);
    EXPECT_EQ(q.front(), i - 1);
    q.pop_front();
  }
  EXPECT_EQ(contents(q), (std::vector<int>{10'000}));
  EXPECT_LE(q.capacity(), 16u);
}

TEST(SmallFifo, APoppedItemReleasesWhatItOwnsAtOnce) {
  small_fifo<std::shared_ptr<int>> q;
  auto item = std::make_shared<int>(7);
  q.push_back(item);
  q.push_back(std::make_shared<int>(8));
  EXPECT_EQ(item.use_count(), 2);
  q.pop_front();  // not drained: the slot stays in the buffer
  EXPECT_EQ(item.use_count(), 1);
}

TEST(SmallFifo, ClearEmptiesTheQueue) {
  small_fifo<int> q;
  for (int i = 0; i < 10; ++i) q.push_back(i);
  q.pop_front();
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.begin(), q.end());
  q.push_back(42);
  EXPECT_EQ(contents(q), (std::vector<int>{42}));
}

}  // namespace
