#include "gateway/net/op_slot.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

namespace {

using slot = fg::gateway::op_slot<64>;

struct small_op {
  std::uint64_t words[8];
};
struct large_op {
  std::uint64_t words[9];
};

TEST(OpSlot, OneOperationAtATimeLivesInTheSlot) {
  slot s;
  slot::allocator<small_op> a(s);
  small_op* first = a.allocate(1);
  EXPECT_TRUE(s.busy());
  // Taken: the next one goes to the heap, not on top of the first.
  small_op* second = a.allocate(1);
  EXPECT_NE(first, second);
  a.deallocate(second, 1);
  EXPECT_TRUE(s.busy());
  a.deallocate(first, 1);
  EXPECT_FALSE(s.busy());
  // Freed: the next operation gets the same room again.
  small_op* again = a.allocate(1);
  EXPECT_EQ(again, first);
  a.deallocate(again, 1);
}

TEST(OpSlot, AnOperationTooLargeGoesToTheHeap) {
  slot s;
  slot::allocator<large_op> a(s);
  large_op* p = a.allocate(1);
  EXPECT_FALSE(s.busy());
  a.deallocate(p, 1);
}

TEST(OpSlot, RebindingKeepsTheSlot) {
  slot s;
  slot::allocator<void> any(s);
  using rebound = std::allocator_traits<slot::allocator<void>>::rebind_alloc<small_op>;
  rebound a(any);
  small_op* p = a.allocate(1);
  EXPECT_TRUE(s.busy());
  a.deallocate(p, 1);
  EXPECT_TRUE(rebound(any) == a);
}

}  // namespace
