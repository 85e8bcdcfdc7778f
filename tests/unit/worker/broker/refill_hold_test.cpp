// The hold alone: which rooms hold, what a held delivery keeps of the
// bytes it came in, the order it gives them back in, and its bounds.
#include "worker/broker/refill_hold.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using fg::worker::deflated_segment;
using fg::worker::held_delivery;
using fg::worker::refill_hold;
using fg::worker::room_position;
using kept = refill_hold::kept;

std::vector<std::uint64_t> offsets(const std::vector<held_delivery>& v) {
  std::vector<std::uint64_t> out;
  out.reserve(v.size());
  for (const auto& d : v) out.push_back(d.offset);
  return out;
}

TEST(RefillHold, OnlyARoomWhoseRefillBeganHolds) {
  refill_hold h;
  EXPECT_EQ(h.keep("R", "x", {"e", 1}, {}), kept::not_held);
  h.begin("R");
  EXPECT_TRUE(h.holding("R"));
  EXPECT_FALSE(h.holding("S"));
  EXPECT_EQ(h.keep("S", "x", {"e", 1}, {}), kept::not_held);
  EXPECT_EQ(h.keep("R", "x", {"e", 1}, {}), kept::held);
}

TEST(RefillHold, EndGivesBackWhatItKeptInOrderAndStopsHolding) {
  refill_hold h;
  h.begin("R");
  for (std::uint64_t i = 5; i <= 7; ++i) ASSERT_EQ(h.keep("R", std::to_string(i), {"e", i}, {}), kept::held);
  const auto held = h.end("R");
  EXPECT_EQ(offsets(held), (std::vector<std::uint64_t>{5, 6, 7}));
  EXPECT_EQ(held[1].payload, "6");
  EXPECT_FALSE(h.holding("R"));
  EXPECT_EQ(h.rooms(), 0u);
  EXPECT_TRUE(h.end("R").empty()) << "ended once";
  EXPECT_EQ(h.keep("R", "8", {"e", 8}, {}), kept::not_held);
}

TEST(RefillHold, AHeldDeliveryOwnsItsBytes) {
  // The channel message a delivery points into is gone by the time the
  // hold ends: the payload, epoch and compression are copies.
  refill_hold h;
  h.begin("R");
  std::string payload = "hello", epoch = "ep1", deflated = "\xf2\x48\x05";
  ASSERT_EQ(h.keep("R", payload, room_position{epoch, 3}, deflated_segment{deflated, 5}), kept::held);
  payload.assign("gone!");
  epoch.assign("new");
  deflated.assign("new");
  const auto held = h.end("R");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].payload, "hello");
  EXPECT_EQ(held[0].at().epoch, "ep1");
  EXPECT_EQ(held[0].at().offset, 3u);
  EXPECT_EQ(held[0].segment().bytes, std::string_view("\xf2\x48\x05"));
  EXPECT_EQ(held[0].segment().covers, 5u);
}

TEST(RefillHold, AnUncompressedDeliveryHasNoSegment) {
  refill_hold h;
  h.begin("R");
  ASSERT_EQ(h.keep("R", "x", {}, {}), kept::held);
  const auto held = h.end("R");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_FALSE(held[0].segment().present());
  EXPECT_EQ(held[0].offset, 0u) << "unnumbered (a foreign message) is held too, in its place";
}

TEST(RefillHold, BeginningAgainKeepsWhatTheRoomHolds) {
  refill_hold h;
  h.begin("R");
  ASSERT_EQ(h.keep("R", "1", {"e", 1}, {}), kept::held);
  h.begin("R");
  EXPECT_EQ(offsets(h.end("R")), (std::vector<std::uint64_t>{1}));
}

TEST(RefillHold, PastItsMessageBoundTheHoldEndsAndGivesBackWhatItKept) {
  refill_hold h(/*max_messages=*/2, /*max_bytes=*/1000);
  h.begin("R");
  h.begin("S");
  ASSERT_EQ(h.keep("R", "1", {"e", 1}, {}), kept::held);
  ASSERT_EQ(h.keep("R", "2", {"e", 2}, {}), kept::held);
  ASSERT_EQ(h.keep("R", "3", {"e", 3}, {}), kept::overflowed);
  EXPECT_EQ(offsets(h.overflow()), (std::vector<std::uint64_t>{1, 2})) << "the third is the caller's to deliver";
  EXPECT_FALSE(h.holding("R"));
  EXPECT_EQ(h.keep("R", "4", {"e", 4}, {}), kept::not_held);
  EXPECT_TRUE(h.holding("S")) << "other rooms go on holding";
  EXPECT_TRUE(h.overflow().empty()) << "handed over once";
}

TEST(RefillHold, PastItsByteBoundTheHoldEnds) {
  refill_hold h(/*max_messages=*/100, /*max_bytes=*/10);
  h.begin("R");
  ASSERT_EQ(h.keep("R", "12345", {"e", 1}, {}), kept::held);
  ASSERT_EQ(h.keep("R", "123", {"e", 2}, deflated_segment{"12", 3}), kept::held) << "10 bytes: at the bound";
  ASSERT_EQ(h.keep("R", "1", {"e", 3}, {}), kept::overflowed);
  EXPECT_EQ(offsets(h.overflow()), (std::vector<std::uint64_t>{1, 2}));
}

TEST(RefillHold, ClearEndsEveryHoldAndGivesNothingBack) {
  refill_hold h;
  h.begin("R");
  h.begin("S");
  ASSERT_EQ(h.keep("R", "1", {"e", 1}, {}), kept::held);
  h.clear();
  EXPECT_EQ(h.rooms(), 0u);
  EXPECT_TRUE(h.end("R").empty());
}

}  // namespace
