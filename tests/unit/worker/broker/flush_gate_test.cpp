// The flush's gate alone, on a made-up clock: what it asks, when it opens,
// and what the buffered publishes are told to reach.
#include "worker/broker/flush_gate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

using fg::worker::flush_gate;
using fg::worker::publish_outbox;
using fg::worker::publish_record;
using action = flush_gate::action;
using namespace std::chrono_literals;

class FlushGate : public ::testing::Test {
 protected:
  static constexpr flush_gate::clock::time_point t0{std::chrono::seconds(1000)};

  // A publish to `room` waits in the outbox; `count`: the room's
  // subscribers before the outage (-1: never published to).
  std::shared_ptr<publish_record> buffer(const std::string& room, long long count = -1) {
    if (count >= 0) gate_.note_receivers(room, count);
    auto r = std::make_shared<publish_record>();
    r->room = room;
    outbox_.push(r);
    return r;
  }
  flush_gate::step check_at(std::chrono::milliseconds after_begin, bool self_subscribed = true) {
    return gate_.check(t0 + after_begin, outbox_, self_subscribed);
  }
  // Asks, as the broker does on action::ask; false if the gate said otherwise.
  bool ask_at(std::chrono::milliseconds after_begin) {
    if (check_at(after_begin).what != action::ask) return false;
    gate_.asked();
    return true;
  }

  flush_gate gate_;
  publish_outbox outbox_{flush_gate::max_asked_rooms + 10};
};

TEST_F(FlushGate, NotHoldingSaysNone) {
  buffer("R");
  EXPECT_FALSE(gate_.holding());
  EXPECT_EQ(check_at(0ms).what, action::none);
}

TEST_F(FlushGate, NothingBufferedOpensAtOnce) {
  gate_.begin(t0, 100ms, 5000ms);
  EXPECT_TRUE(gate_.holding());
  EXPECT_EQ(check_at(0ms, false).what, action::open) << "nobody can miss anything";
}

TEST_F(FlushGate, WrittenOnesDoNotCountAsBuffered) {
  buffer("R", 2);
  outbox_.mark_written(t0);
  gate_.begin(t0, 100ms, 5000ms);
  EXPECT_EQ(check_at(0ms).what, action::open);
}

TEST_F(FlushGate, WaitsForItsOwnResubscriptionFirst) {
  buffer("R", 2);
  gate_.begin(t0, 100ms, 5000ms);
  EXPECT_EQ(check_at(0ms, false).what, action::poll);
  EXPECT_EQ(check_at(0ms, true).what, action::ask);
}

TEST_F(FlushGate, AsksOnceForTheDistinctCountedRooms) {
  buffer("a", 2);
  buffer("b", 3);
  buffer("a");
  buffer("c");
  gate_.begin(t0, 100ms, 5000ms);
  auto rooms = check_at(0ms).rooms;
  std::sort(rooms.begin(), rooms.end());
  EXPECT_EQ(rooms, (std::vector<std::string>{"a", "b"})) << "c has no count";
  gate_.asked();
  EXPECT_EQ(check_at(0ms).what, action::none) << "an answer is awaited";
}

TEST_F(FlushGate, AsksAboutABoundedNumberOfRooms) {
  for (std::size_t i = 0; i < flush_gate::max_asked_rooms + 5; ++i) buffer("r" + std::to_string(i), 1);
  gate_.begin(t0, 0ms, 5000ms);
  EXPECT_EQ(check_at(0ms).rooms.size(), flush_gate::max_asked_rooms);
}

TEST_F(FlushGate, OpensWhenEveryRoomIsBack) {
  buffer("R", 2);
  gate_.begin(t0, 0ms, 5000ms);
  ASSERT_TRUE(ask_at(0ms));
  EXPECT_FALSE(gate_.back("R", 1));
  EXPECT_TRUE(gate_.back("R", 2));
  EXPECT_TRUE(gate_.back("R", 3));
  EXPECT_TRUE(gate_.back("unknown", 0)) << "a room with no count holds nothing up";
  EXPECT_EQ(gate_.answered(false, t0), action::poll);
  ASSERT_TRUE(ask_at(25ms)) << "asked again after the poll";
  EXPECT_EQ(gate_.answered(true, t0 + 50ms), action::open);
}

TEST_F(FlushGate, UncountedRoomsWaitTheSettleTime) {
  buffer("new");
  gate_.begin(t0, 200ms, 5000ms);
  EXPECT_EQ(check_at(0ms).what, action::poll);
  EXPECT_EQ(check_at(199ms).what, action::poll);
  EXPECT_EQ(check_at(200ms).what, action::open);
}

TEST_F(FlushGate, CountedRoomsBackStillWaitTheSettleTimeForUncountedOnes) {
  buffer("old", 1);
  buffer("new");
  gate_.begin(t0, 200ms, 5000ms);
  ASSERT_TRUE(ask_at(0ms));
  EXPECT_EQ(gate_.answered(true, t0 + 10ms), action::poll);
  ASSERT_TRUE(ask_at(200ms));
  EXPECT_EQ(gate_.answered(true, t0 + 210ms), action::open);
}

TEST_F(FlushGate, TheWaitIsBoundedAndASettleTimeBeyondItExtendsIt) {
  buffer("R", 2);
  gate_.begin(t0, 100ms, 1000ms);
  EXPECT_EQ(check_at(999ms, false).what, action::poll);
  EXPECT_EQ(check_at(1000ms, false).what, action::open_late);

  gate_.begin(t0, 3000ms, 1000ms);
  EXPECT_EQ(check_at(2999ms, false).what, action::poll);
  EXPECT_EQ(check_at(3000ms, false).what, action::open_late);
}

TEST_F(FlushGate, EveryGateHasItsOwnGeneration) {
  gate_.begin(t0, 0ms, 5000ms);
  const auto first = gate_.generation();
  gate_.cancel();
  EXPECT_FALSE(gate_.holding());
  const auto cancelled = gate_.generation();
  EXPECT_NE(cancelled, first) << "an answer to the cancelled gate is recognised";
  gate_.begin(t0, 0ms, 5000ms);
  EXPECT_NE(gate_.generation(), cancelled);
}

TEST_F(FlushGate, CancelForgetsTheQuestion) {
  buffer("R", 1);
  gate_.begin(t0, 0ms, 5000ms);
  gate_.asked();
  gate_.cancel();
  gate_.begin(t0, 0ms, 5000ms);
  EXPECT_EQ(check_at(0ms).what, action::ask) << "the new gate asks again";
}

TEST_F(FlushGate, OpeningTellsTheBufferedPublishesWhatTheyShouldReach) {
  const auto written = buffer("R", 3);
  outbox_.mark_written(t0);
  const auto counted = buffer("R");
  const auto uncounted = buffer("S");
  gate_.begin(t0, 0ms, 5000ms);
  gate_.open(outbox_);
  EXPECT_FALSE(gate_.holding());
  EXPECT_EQ(counted->expect, 3);
  EXPECT_EQ(uncounted->expect, -1);
  EXPECT_EQ(written->expect, -1) << "written before the outage ended: not part of the flush";
}

TEST_F(FlushGate, ReceiverCountsKeepTheLatestAndAreBounded) {
  EXPECT_EQ(gate_.receivers("R"), -1);
  gate_.note_receivers("R", 4);
  gate_.note_receivers("R", 2);
  EXPECT_EQ(gate_.receivers("R"), 2);
  for (std::size_t i = 1; i < flush_gate::max_counted_rooms; ++i) gate_.note_receivers("r" + std::to_string(i), 1);
  EXPECT_EQ(gate_.receivers("R"), 2) << "at the bound";
  gate_.note_receivers("R", 5);
  EXPECT_EQ(gate_.receivers("R"), 5) << "updating a known room clears nothing";
  gate_.note_receivers("one more", 1);
  EXPECT_EQ(gate_.receivers("R"), -1) << "past the bound the table starts over";
  EXPECT_EQ(gate_.receivers("one more"), 1);
}

}  // namespace
