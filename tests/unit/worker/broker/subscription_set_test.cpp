// Subscription bookkeeping alone: net changes per turn, confirmation by
// replies, and the resubscription after a reconnect.
#include "worker/broker/subscription_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using fg::worker::subscription_set;
using strings = std::vector<std::string>;

strings sorted(strings v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Sends what changed and has Redis answer every room of it.
void flush_and_answer(subscription_set& s) {
  const auto c = s.take_changes();
  s.sent(c.subscribe);
  s.sent(c.unsubscribe);
  for (const auto& r : c.subscribe) s.answered(r, true);
  for (const auto& r : c.unsubscribe) s.answered(r, false);
}

TEST(SubscriptionSet, WantAndUnwantSayWhetherAnythingChanged) {
  subscription_set s;
  EXPECT_FALSE(s.changed());
  EXPECT_TRUE(s.want("a"));
  EXPECT_FALSE(s.want("a"));
  EXPECT_TRUE(s.wants("a"));
  EXPECT_TRUE(s.changed());
  EXPECT_TRUE(s.unwant("a"));
  EXPECT_FALSE(s.unwant("a"));
  EXPECT_FALSE(s.unwant("never"));
  EXPECT_FALSE(s.wants("a"));
  EXPECT_EQ(s.wanted(), 0u);
}

TEST(SubscriptionSet, TheChangesOfATurnLeaveAsTheirNetDifference) {
  subscription_set s;
  s.want("a");
  s.want("b");
  s.want("gone");
  s.unwant("gone");  // joined and left within the turn: nothing to send
  const auto c = s.take_changes();
  EXPECT_EQ(sorted(c.subscribe), (strings{"a", "b"}));
  EXPECT_TRUE(c.unsubscribe.empty());
  EXPECT_FALSE(s.changed());
  EXPECT_EQ(s.announced(), 2u);
  EXPECT_TRUE(s.take_changes().subscribe.empty()) << "taken once";
}

TEST(SubscriptionSet, LeavingAnAnnouncedRoomUnsubscribes) {
  subscription_set s;
  s.want("a");
  s.want("b");
  flush_and_answer(s);
  s.unwant("a");
  s.unwant("b");
  s.want("b");  // left and came back within the turn: still subscribed
  const auto c = s.take_changes();
  EXPECT_TRUE(c.subscribe.empty());
  EXPECT_EQ(c.unsubscribe, (strings{"a"}));
  EXPECT_EQ(s.announced(), 1u);
}

TEST(SubscriptionSet, ARoomIsConfirmedOnceEveryCommandForItIsAnswered) {
  subscription_set s;
  s.want("a");
  EXPECT_FALSE(s.confirmed("a")) << "not sent";
  const auto c = s.take_changes();
  s.sent(c.subscribe);
  EXPECT_FALSE(s.confirmed("a")) << "not answered";
  s.answered("a", true);
  EXPECT_TRUE(s.confirmed("a"));

  // Leave and rejoin in two turns: two commands in flight.
  s.unwant("a");
  s.sent(s.take_changes().unsubscribe);
  s.want("a");
  s.sent(s.take_changes().subscribe);
  s.answered("a", false);
  EXPECT_FALSE(s.confirmed("a")) << "the SUBSCRIBE is still unanswered";
  s.answered("a", true);
  EXPECT_TRUE(s.confirmed("a"));
}

TEST(SubscriptionSet, AnswersForRoomsNotAwaitedAreHarmless) {
  subscription_set s;
  EXPECT_FALSE(s.answered("x", true));
  EXPECT_FALSE(s.answered("x", false));
  EXPECT_FALSE(s.confirmed("x"));
}

TEST(SubscriptionSet, DroppedChangesAreNotSent) {
  subscription_set s;
  s.want("a");
  s.drop_changes();
  EXPECT_FALSE(s.changed());
  EXPECT_TRUE(s.take_changes().subscribe.empty());
  EXPECT_TRUE(s.wants("a")) << "still wanted: the next connection subscribes it";
}

TEST(SubscriptionSet, AReconnectSubscribesEveryWantedRoomAgain) {
  subscription_set s;
  s.want("a");
  s.want("b");
  flush_and_answer(s);
  s.want("c");  // not flushed yet
  const strings rooms = s.reconnect();
  EXPECT_EQ(sorted(rooms), (strings{"a", "b", "c"}));
  EXPECT_FALSE(s.changed()) << "the resubscription covers the pending changes";
  EXPECT_EQ(s.announced(), 0u);
  EXPECT_FALSE(s.confirmed("a"));
}

TEST(SubscriptionSet, TheResubscriptionCompletesWithItsLastAnswer) {
  subscription_set s;
  s.want("a");
  s.want("b");
  const strings rooms = s.reconnect();
  s.sent(rooms);
  s.resubscribing(rooms);
  EXPECT_FALSE(s.resubscribed());
  EXPECT_EQ(s.announced(), 2u);
  EXPECT_FALSE(s.answered("a", false)) << "an UNSUBSCRIBE answer does not count";
  EXPECT_FALSE(s.answered("a", true));
  EXPECT_FALSE(s.resubscribed());
  EXPECT_TRUE(s.answered("b", true)) << "the last one completes it";
  EXPECT_TRUE(s.resubscribed());
  EXPECT_FALSE(s.answered("b", true)) << "and only once";
  EXPECT_TRUE(s.confirmed("b"));
}

TEST(SubscriptionSet, ALostConnectionForgetsWhatItWasTold) {
  subscription_set s;
  s.want("a");
  const strings rooms = s.reconnect();
  s.sent(rooms);
  s.resubscribing(rooms);
  s.connection_lost();
  EXPECT_TRUE(s.resubscribed()) << "nothing to wait for on a connection that is gone";
  EXPECT_EQ(s.announced(), 0u);
  EXPECT_FALSE(s.confirmed("a"));
  EXPECT_TRUE(s.wants("a"));
  s.want("b");
  EXPECT_TRUE(s.changed()) << "changes after the loss are still recorded";
}

}  // namespace
