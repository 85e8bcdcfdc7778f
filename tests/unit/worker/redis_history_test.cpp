// Room history against a real redis-server: Redis numbers each room's
// messages, keeps the last --history-size, and broker::history answers a
// client's position with exactly the messages after it, or says why not.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/unit/worker/redis_broker_fixture.hpp"
#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/history_scripts.hpp"
#include "worker/broker/redis_envelope.hpp"

namespace {

using namespace fg::worker;
using namespace std::chrono_literals;
using fg::test::worker_under_test;
using outcome = room_history::outcome;

class RedisHistory : public fg::test::RedisBrokerFixture {
 protected:
  // broker::history of `w`, run to its answer.
  std::optional<room_history> ask(worker_under_test& w, const std::string& room,
                                  std::optional<history_since> since = std::nullopt) {
    std::optional<room_history> got;
    w.broker->history(room, since, [&](room_history h) { got = std::move(h); });
    if (!run_until([&] { return got.has_value(); })) return std::nullopt;
    return got;
  }
  // Two workers subscribed to R; `a` published 1..n and `b` got them all.
  struct pair {
    worker_under_test& a;
    worker_under_test& b;
  };
  std::optional<pair> room_with(int n) {
    auto& a = add_worker();
    auto& b = add_worker();
    if (!subscribe_both(a, b, "R") || !publish_numbers(a, b, n)) return std::nullopt;
    return pair{a, b};
  }
  // A publisher that never subscribes and a member of R that has
  // delivered the publisher's "1" and comes back 150..300 ms after losing
  // a connection (the partition tests' refills).
  std::optional<pair> member_with_one_delivery() {
    auto& publisher = add_worker();
    auto& member = add_worker(10000, [](redis_broker_options& o) {
      o.connection.backoff_min = 300ms;
      o.connection.backoff_max = 300ms;
    });
    member.broker->subscribe("R");
    if (!run_until([&] { return member.broker->confirmed("R") && publisher.broker->flowing(); })) return std::nullopt;
    publisher.broker->publish("R", "1");
    if (!run_until([&] { return member.got.size() == 1; })) return std::nullopt;
    return pair{publisher, member};
  }
  // The member's subscribe connection killed, and known lost, with its
  // refill reads paused (they wait until the test resumes them).
  bool subscription_lost_with_refills_paused(worker_under_test& member) {
    member.broker->pause_refills_for_test(true);
    if (server_.command({"CLIENT", "KILL", "TYPE", "pubsub"}) != "1") return false;
    return run_until([&] { return !member.broker->confirmed("R"); });
  }
  // Publishes 1..n from `a` and runs until `b` has them all.
  bool publish_numbers(worker_under_test& a, worker_under_test& b, int n) {
    const std::size_t before = b.got.size();
    for (int i = 1; i <= n; ++i) a.broker->publish("R", std::to_string(i));
    return run_until([&] { return b.got.size() == before + static_cast<std::size_t>(n); });
  }
};

TEST_F(RedisHistory, ARecoveryOfCompressedPublishesGetsThePlainMessages) {
  // The history stream keeps the envelope as published, compression and all
  // (--publish-deflate): a recovery hands out the message alone.
  auto& a = add_worker(10000, [](redis_broker_options& o) { o.publish_deflate = {.enabled = true, .threshold = 16}; });
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  const std::string message = R"({"room":"R","data":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})";
  for (int i = 0; i < 2; ++i) a.broker->publish("R", message, publish_options{true, nullptr, message.size() - 1});
  ASSERT_TRUE(run_until([&] { return b.got.size() == 2; }));
  ASSERT_NE(b.segments[0], "") << "sent compressed";
  const auto top = ask(b, "R");
  ASSERT_TRUE(top);
  const auto h = ask(b, "R", history_since{top->epoch, 0});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->result, outcome::recovered);
  ASSERT_EQ(h->entries.size(), 2u);
  for (const auto& e : h->entries) EXPECT_EQ(e.payload, message);
}

// After a partition another worker's flush may reach Redis before this
// worker's subscription is back (its gate counted the subscription the
// partition left on Redis): the message goes to a dead connection. The
// worker reads it from the room's history once it has resubscribed.
TEST_F(RedisHistory, AMessagePublishedWhileASubscriptionWasDownComesFromTheHistoryOnceItIsBack) {
  const auto w = member_with_one_delivery();
  ASSERT_TRUE(w);
  auto& publisher = w->a;  // never subscribes
  auto& member = w->b;

  EXPECT_EQ(server_.command({"CLIENT", "KILL", "TYPE", "pubsub"}), "1");
  publisher.broker->publish("R", "2");
  ASSERT_TRUE(run_until([&] { return publisher.broker->outbox_size() == 0; })) << "acknowledged: to nobody";
  EXPECT_FALSE(member.broker->confirmed("R")) << "published before the member's worker was back";
  ASSERT_TRUE(run_until([&] { return member.got.size() == 2; }));
  publisher.broker->publish("R", "3");
  ASSERT_TRUE(run_until([&] { return member.got.size() == 3; }));
  run_for(100ms);
  EXPECT_EQ(member.got, (std::vector<std::string>{"R 1", "R 2", "R 3"}));
  EXPECT_EQ(member.offsets, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(member.broker->stats().refilled, 1u);
  EXPECT_EQ(member.broker->stats().gaps, 0u);
}

// A message published once the subscription is back arrives live, maybe
// before the refill's read has answered. Delivered at once it would pass
// the missed one, which would stay a gap; it waits behind the refill
// instead, and as the read ran after it was published, the read brought
// it too: the held copy is dropped.
TEST_F(RedisHistory, ALiveMessageThatComesBeforeTheRefillsAnswerWaitsBehindIt) {
  const auto w = member_with_one_delivery();
  ASSERT_TRUE(w && subscription_lost_with_refills_paused(w->b));
  auto& publisher = w->a;  // never subscribes
  auto& member = w->b;
  publisher.broker->publish("R", "2");
  ASSERT_TRUE(run_until([&] { return publisher.broker->outbox_size() == 0; })) << "acknowledged: to nobody";
  ASSERT_TRUE(run_until([&] { return member.broker->confirmed("R"); })) << "resubscribed; the refill waits";
  publisher.broker->publish("R", "3");
  ASSERT_TRUE(run_until([&] { return member.broker->stats().refill_held == 1; })) << "3 arrived live and waits";
  EXPECT_EQ(member.got, (std::vector<std::string>{"R 1"}));

  member.broker->pause_refills_for_test(false);
  ASSERT_TRUE(run_until([&] { return member.got.size() == 3; }));
  publisher.broker->publish("R", "4");
  ASSERT_TRUE(run_until([&] { return member.got.size() == 4; }));
  run_for(100ms);
  EXPECT_EQ(member.got, (std::vector<std::string>{"R 1", "R 2", "R 3", "R 4"}));
  EXPECT_EQ(member.offsets, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  const auto s = member.broker->stats();
  EXPECT_EQ(s.refilled, 2u) << "the read ran after 3 was published";
  EXPECT_EQ(s.duplicates, 1u) << "the held live copy of 3";
  EXPECT_EQ(s.gaps, 0u);
  EXPECT_EQ(s.refill_held, 1u) << "4 came after the refill: not held";
}

TEST_F(RedisHistory, LeavingARoomWhoseRefillWaitsDropsWhatItHeld) {
  const auto w = member_with_one_delivery();
  ASSERT_TRUE(w && subscription_lost_with_refills_paused(w->b));
  auto& publisher = w->a;
  auto& member = w->b;
  ASSERT_TRUE(run_until([&] { return member.broker->confirmed("R"); }));
  publisher.broker->publish("R", "2");
  ASSERT_TRUE(run_until([&] { return member.broker->stats().refill_held == 1; }));
  member.broker->unsubscribe("R");
  member.broker->pause_refills_for_test(false);
  run_for(200ms);
  EXPECT_EQ(member.got, (std::vector<std::string>{"R 1"})) << "nobody here is in the room now";
}

TEST_F(RedisHistory, DeliveriesAreNumberedInOrderForEveryWorker) {
  const auto w = room_with(5);
  ASSERT_TRUE(w);
  auto& a = w->a;  // named references, not a structured binding: clang 14 cannot capture one
  auto& b = w->b;
  ASSERT_TRUE(run_until([&] { return a.got.size() == 5; }));
  const std::vector<std::uint64_t> want{1, 2, 3, 4, 5};
  EXPECT_EQ(a.offsets, want) << "the publisher's own members get the numbered copy from Redis";
  EXPECT_EQ(b.offsets, want);
  EXPECT_EQ(b.got.front(), "R 1") << "the offset line never reaches the payload";
  EXPECT_EQ(a.broker->stats().delivered_locally, 0u);
}

TEST_F(RedisHistory, APublishInTheTurnOfItsRoomsFirstJoinReachesTheJoinedMembers) {
  // Numbered publishes reach this worker's members only through its
  // subscription, and Redis runs the subscribe connection's SUBSCRIBE and
  // the publish connection's script in no set order: a publish sent beside
  // its room's first SUBSCRIBE waits for the acknowledgement. Rooms of the
  // same turn (and the publishes behind a held one) keep their order.
  auto& a = add_worker();
  auto& b = add_worker();
  // Both connections up: the subscribe one too (publishes flow without it).
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && a.broker->up() && b.broker->flowing(); }));
  b.broker->subscribe("r0");
  ASSERT_TRUE(run_until([&] { return b.broker->confirmed("r0"); }));
  // The publish connection has a write waiting before the subscribe
  // connection does (as when a join's presence update went first): its
  // commands reach Redis first.
  a.broker->publish("elsewhere", "unheld");  // a room nobody here joined goes at once
  constexpr std::size_t rooms = 20;
  for (std::size_t i = 0; i < rooms; ++i) {
    const std::string room = "r" + std::to_string(i);
    a.broker->subscribe(room);  // a client's join and publish, read in one turn
    a.broker->publish(room, "first");
    a.broker->publish(room, "second");
  }
  ASSERT_TRUE(run_until([&] { return a.got.size() == 2 * rooms && b.got.size() == 2; }))
      << a.got.size() << " delivered here, " << b.got.size() << " to the other worker";
  for (std::size_t i = 0; i < rooms; ++i) {
    const std::string room = "r" + std::to_string(i);
    EXPECT_EQ(a.got[2 * i], room + " first");
    EXPECT_EQ(a.got[2 * i + 1], room + " second");
    EXPECT_EQ(a.offsets[2 * i], 1u) << room;
    EXPECT_EQ(a.offsets[2 * i + 1], 2u) << room;
  }
  EXPECT_EQ(b.got, (std::vector<std::string>{"r0 first", "r0 second"})) << "other workers as before";
  EXPECT_EQ(a.broker->stats().held_publishes, 2u * rooms);
  EXPECT_EQ(a.broker->stats().delivered_locally, 0u);
  EXPECT_EQ(a.broker->stats().gaps, 0u);
  EXPECT_EQ(a.broker->outbox_size(), 0u);
}

TEST_F(RedisHistory, PublishesHeldForASubscriptionAreBoundedLikeTheOutbox) {
  auto& a = add_worker(3);
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && a.broker->up(); }));
  server_.freeze();  // the SUBSCRIBE below is never answered while frozen
  a.broker->subscribe("R");
  for (int i = 1; i <= 5; ++i) a.broker->publish("R", std::to_string(i));
  run_for(100ms);
  EXPECT_EQ(a.broker->stats().held_publishes, 5u);
  EXPECT_EQ(a.broker->outbox_size(), 2u) << "past the bound (3), the oldest went on unheld";
  EXPECT_EQ(a.broker->stats().dropped, 0u);
  server_.thaw();
  // The held ones leave once the SUBSCRIBE is answered and reach the member
  // here, the last publish last. (They join an outbox that may still hold
  // the two unanswered ones: past its bound it drops the oldest unwritten,
  // as it always does.)
  ASSERT_TRUE(run_until([&] { return a.broker->outbox_size() == 0 && !a.got.empty() && a.got.back() == "R 5"; }))
      << a.got.size() << " delivered";
  EXPECT_EQ(a.offsets.back(), 5u - a.broker->stats().dropped);
}

TEST_F(RedisHistory, ThePositionAndEverythingAfterIt) {
  const auto w = room_with(5);
  ASSERT_TRUE(w);
  auto& b = w->b;

  const auto now = ask(b, "R");
  ASSERT_TRUE(now);
  EXPECT_EQ(now->result, outcome::current);
  EXPECT_EQ(now->top, 5u);
  EXPECT_EQ(now->epoch.size(), 16u);

  const auto rec = ask(b, "R", history_since{now->epoch, 2});
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->result, outcome::recovered);
  ASSERT_EQ(rec->entries.size(), 3u);
  EXPECT_EQ(rec->entries[0].offset, 3u);
  EXPECT_EQ(rec->entries[0].payload, "3");
  EXPECT_EQ(rec->entries[2].payload, "5");

  EXPECT_EQ(ask(b, "R", history_since{now->epoch, 5})->result, outcome::recovered);
  EXPECT_EQ(ask(b, "R", history_since{now->epoch, 6})->result, outcome::ahead);
  EXPECT_EQ(ask(b, "R", history_since{"0123456789abcdef", 2})->result, outcome::epoch_changed);
  EXPECT_EQ(b.broker->stats().history[static_cast<std::size_t>(outcome::recovered)], 2u);
}

TEST_F(RedisHistory, OnlyTheLastHistorySizeMessagesAreKept) {
  history_size_ = 3;
  const auto w = room_with(6);
  ASSERT_TRUE(w);
  auto& b = w->b;
  const auto now = ask(b, "R");
  ASSERT_TRUE(now);
  EXPECT_EQ(ask(b, "R", history_since{now->epoch, 3})->result, outcome::recovered);
  EXPECT_EQ(ask(b, "R", history_since{now->epoch, 2})->result, outcome::trimmed);
  EXPECT_EQ(server_.command({"XLEN", history_stream_key("framegate:room:R")}), "3");
  EXPECT_EQ(b.broker->report().history_messages, 3u) << "the history length /metrics shows";
  b.broker->unsubscribe("R");
  EXPECT_EQ(b.broker->report().history_messages, 0u);
}

TEST_F(RedisHistory, ALostHistoryIsANewEpoch) {
  const auto w = room_with(2);
  ASSERT_TRUE(w);
  auto& a = w->a;
  auto& b = w->b;
  const auto before = ask(b, "R");
  ASSERT_TRUE(before);

  server_.kill();  // started with --save "": everything is gone
  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && b.broker->confirmed("R"); }, 10000ms));
  ASSERT_TRUE(publish_numbers(a, b, 1));
  EXPECT_EQ(b.offsets.back(), 1u) << "numbering starts over";
  const auto after = ask(b, "R", history_since{before->epoch, 2});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->result, outcome::epoch_changed);
  EXPECT_NE(after->epoch, before->epoch);
  EXPECT_EQ(after->top, 1u);
}

TEST_F(RedisHistory, AHistoryWithoutASubscriptionOrRedisIsUnavailable) {
  auto& a = add_worker();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }));
  const auto h = ask(a, "R");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->result, outcome::unavailable);
  EXPECT_NE(h->error.find("subscribe"), std::string::npos);

  a.broker->subscribe("R");
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("R"); }));
  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing(); }));
  EXPECT_EQ(ask(a, "R")->result, outcome::unavailable);
}

TEST_F(RedisHistory, AReadWaitsForTheSubscriptionSoNoLiveMessageFallsBetween) {
  auto& a = add_worker();
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  ASSERT_TRUE(publish_numbers(a, b, 3));
  auto& c = add_worker();
  ASSERT_TRUE(run_until([&] { return c.broker->flowing(); }));
  // Subscribe and ask in one turn, then publish while the answer is on its way.
  c.broker->subscribe("R");
  std::optional<room_history> h;
  c.broker->history("R", std::nullopt, [&](room_history r) {
    h = std::move(r);
    EXPECT_TRUE(c.broker->confirmed("R")) << "answered before the subscription was in place";
  });
  for (int i = 4; i <= 6; ++i) a.broker->publish("R", std::to_string(i));
  ASSERT_TRUE(run_until([&] { return h.has_value() && b.got.size() == 6; }));
  run_for(100ms);
  // Whatever the top turned out to be, every message above it came live.
  std::vector<std::uint64_t> above;
  for (const auto n : c.offsets)
    if (n > h->top) above.push_back(n);
  std::vector<std::uint64_t> want;
  for (std::uint64_t n = h->top + 1; n <= 6; ++n) want.push_back(n);
  EXPECT_EQ(above, want);
}

TEST_F(RedisHistory, ACopySentAgainIsPublishedOnce) {
  // What a publish connection that dies between write and reply does: the
  // same (origin, seq) reaches the script twice.
  const std::string channel = "framegate:room:R", meta = history_meta_key(channel),
                    stream = history_stream_key(channel);
  const std::string env = encode_redis_envelope(7, 1, "x");
  const auto eval = [&] {
    return server_.command({"EVAL", std::string(history_publish_script().body), "2", meta, stream, channel, env,
                            "0000000000000007", "1", "10", "60", "e"});
  };
  EXPECT_EQ(eval(), "0 1") << "{receivers, offset}";
  EXPECT_EQ(eval(), "-1 0");
  EXPECT_EQ(server_.command({"XLEN", stream}), "1");
  EXPECT_EQ(server_.command({"HGET", meta, "!top"}), "1");
}

TEST_F(RedisHistory, AForgedEntryIsLeftOutAndShowsAsAGap) {
  auto& a = add_worker(10000, [](redis_broker_options& o) { o.secret = "s3cret"; });
  auto& b = add_worker(10000, [](redis_broker_options& o) { o.secret = "s3cret"; });
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  ASSERT_TRUE(publish_numbers(a, b, 2));
  const std::string stream = history_stream_key("framegate:room:R");
  // Someone with Redis access appends a third message without the secret.
  EXPECT_EQ(server_.command({"XADD", stream, "3-0", "m", encode_redis_envelope(9, 1, "forged")}), "3-0");
  server_.command({"HSET", fg::worker::history_meta_key("framegate:room:R"), "!top", "3"});
  const auto now = ask(b, "R");
  ASSERT_TRUE(now);
  const auto h = ask(b, "R", history_since{now->epoch, 0});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->result, outcome::trimmed);
  EXPECT_EQ(b.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::bad_mac)], 1u);
}

}  // namespace
