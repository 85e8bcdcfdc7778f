// The Redis broker against a real redis-server started by the test (free
// port on 127.0.0.1, stopped by PID): exactly-once delivery, coalesced
// subscriptions, pipelined publishes, and the outage rules (local delivery,
// bounded buffer, resubscribe, no duplicates after the reconnect).
#include "worker/broker/redis_broker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/logging.hpp"
#include "tests/unit/support/raw_inflate.hpp"
#include "tests/unit/worker/redis_broker_fixture.hpp"
#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/broker/redis_envelope.hpp"
#include "worker/broker/redis_url.hpp"

namespace {

using namespace fg::worker;
using namespace std::chrono_literals;
using fg::test::fast_reconnects;
using fg::test::worker_under_test;

// These pin the broker without history (--history-size 0): outages
// deliver locally. redis_history_test.cpp covers the numbered mode.
class RedisBroker : public fg::test::RedisBrokerFixture {
 protected:
  RedisBroker() { history_size_ = 0; }
};

TEST_F(RedisBroker, APublishReachesEveryWorkerOncePublisherIncluded) {
  auto& a = add_worker();
  auto& b = add_worker();
  auto& c = add_worker();
  a.broker->subscribe("R");
  b.broker->subscribe("R");
  c.broker->subscribe("S");
  ASSERT_TRUE(run_until([&] {
    return a.broker->flowing() && a.broker->confirmed("R") && b.broker->confirmed("R") && c.broker->confirmed("S");
  }));
  EXPECT_EQ(numsub("framegate:room:R"), "2");

  a.broker->publish("R", "hello");
  EXPECT_TRUE(a.got.empty()) << "with Redis up, the publisher's worker waits for its own copy";
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 1; }));
  run_for(300ms);
  EXPECT_EQ(a.got, (std::vector<std::string>{"R hello"}));
  EXPECT_EQ(b.got, (std::vector<std::string>{"R hello"}));
  EXPECT_TRUE(c.got.empty());
  EXPECT_EQ(a.broker->stats().delivered_locally, 0u);
}

TEST_F(RedisBroker, SubscriptionChangesOfOneTurnAreOneCommand) {
  auto& a = add_worker();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }));
  const auto subs_before = server_.calls("subscribe");
  for (int i = 0; i < 20; ++i) a.broker->subscribe("r" + std::to_string(i));
  a.broker->subscribe("gone");
  a.broker->unsubscribe("gone");  // joined and left within the turn: nothing to send
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("r0") && a.broker->confirmed("r19"); }));
  EXPECT_EQ(server_.calls("subscribe") - subs_before, 1u);
  EXPECT_EQ(numsub("framegate:room:r7"), "1");
  EXPECT_EQ(numsub("framegate:room:gone"), "0");

  for (int i = 0; i < 20; ++i) a.broker->unsubscribe("r" + std::to_string(i));
  ASSERT_TRUE(run_until([&] { return numsub("framegate:room:r0") == "0" && numsub("framegate:room:r19") == "0"; }));
  EXPECT_EQ(server_.calls("unsubscribe"), 1u);
  EXPECT_EQ(a.broker->stats().subscribe_commands, 1u);
  EXPECT_EQ(a.broker->stats().unsubscribe_commands, 1u);
}

TEST_F(RedisBroker, PublishesOfOneTurnLeaveInOneWrite) {
  auto& a = add_worker();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }));
  const auto writes_before = a.broker->publish_io().write_events;
  for (int i = 0; i < 200; ++i) a.broker->publish("R", "m" + std::to_string(i));
  ASSERT_TRUE(run_until([&] { return a.broker->outbox_size() == 0; }));
  EXPECT_EQ(server_.calls("publish"), 200u);
  EXPECT_LE(a.broker->publish_io().write_events - writes_before, 2u) << "publishes were not pipelined";
}

TEST_F(RedisBroker, PublishDeflateSendsTheStablePrefixCompressedThroughRedis) {
  auto& a = add_worker(10000, [](redis_broker_options& o) { o.publish_deflate = {.enabled = true, .threshold = 64}; });
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  std::string big = R"({"room":"R","data":[)";
  for (int i = 0; i < 30; ++i) big += R"({"id":)" + std::to_string(i) + R"(,"name":"member"},)";
  big += "0]}";
  std::string noise;  // just above the threshold and incompressible: not smaller compressed
  for (std::uint32_t x = 12345; noise.size() < 80;) {
    x = x * 1103515245u + 12345u;
    noise += static_cast<char>('!' + (x >> 16) % 90);
  }
  const auto publish = [&](worker_under_test& from, const std::string& payload, std::size_t stable) {
    from.broker->publish("R", payload, publish_options{true, nullptr, stable});
  };
  publish(a, big, big.size() - 1);
  publish(a, "{\"small\":1}", 10);
  publish(a, big, 0);
  publish(a, noise, noise.size() - 1);
  publish(b, big, big.size() - 1);  // b compresses nothing
  ASSERT_TRUE(run_until([&] { return a.got.size() == 5 && b.got.size() == 5; }));

  for (auto* w : {&a, &b}) {
    ASSERT_EQ(w->segments.size(), 5u);
    EXPECT_EQ(w->got[0], "R " + big);
    EXPECT_EQ(w->covers[0], big.size() - 1);
    EXPECT_EQ(fg::test::inflate_text(w->segments[0]), big.substr(0, big.size() - 1));
    EXPECT_EQ(w->segments[1], "") << "below --publish-deflate-threshold";
    EXPECT_EQ(w->segments[2], "") << "no stable prefix";
    EXPECT_EQ(w->segments[3], "") << "not smaller compressed";
    EXPECT_EQ(w->segments[4], "") << "b has no --publish-deflate";
    EXPECT_EQ(w->broker->stats().deflated_deliveries, 1u);
  }
  EXPECT_EQ(a.broker->stats().deflated_publishes, 1u);
  EXPECT_EQ(b.broker->stats().deflated_publishes, 0u);
}

TEST_F(RedisBroker, JoinAndPublishInOneTurnIsDeliveredOnce) {
  auto& a = add_worker();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }));
  a.broker->subscribe("R");
  a.broker->publish("R", "first");  // the SUBSCRIBE is not acknowledged yet
  EXPECT_EQ(a.got, (std::vector<std::string>{"R first"})) << "delivered locally at once";
  run_for(300ms);
  EXPECT_EQ(a.got.size(), 1u) << "and its copy from Redis skipped";
}

TEST_F(RedisBroker, OutageDeliversLocallyThenResendsWithoutDuplicates) {
  auto& a = add_worker();
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));

  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing() && !b.broker->confirmed("R"); }));
  for (int i = 1; i <= 5; ++i) a.broker->publish("R", std::to_string(i));
  EXPECT_EQ(a.got.size(), 5u) << "local members keep receiving during the outage";
  EXPECT_TRUE(b.got.empty());

  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return b.got.size() == 5; }, 10000ms));
  run_for(500ms);
  const std::vector<std::string> want{"R 1", "R 2", "R 3", "R 4", "R 5"};
  EXPECT_EQ(a.got, want) << "the copies coming back must not be delivered again";
  EXPECT_EQ(b.got, want);
  EXPECT_EQ(numsub("framegate:room:R"), "2") << "both resubscribed";

  const auto s = a.broker->stats();
  EXPECT_EQ(s.published, 5u);
  EXPECT_EQ(s.buffered, 5u);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.delivered_locally, 5u);
  EXPECT_GE(s.reconnects, 2u);
  EXPECT_EQ(s.resubscribes, 1u);
  EXPECT_EQ(b.broker->stats().resubscribes, 1u);

  // Back to normal: through Redis again, once each.
  a.broker->publish("R", "6");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 6 && b.got.size() == 6; }));
  EXPECT_EQ(a.broker->stats().delivered_locally, 5u);
}

TEST_F(RedisBroker, ABufferOverflowDropsTheOldestAndCountsThem) {
  auto& a = add_worker(3);
  auto& b = add_worker(3);
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing(); }));
  for (int i = 1; i <= 10; ++i) a.broker->publish("R", std::to_string(i));
  EXPECT_EQ(a.got.size(), 10u);
  EXPECT_EQ(a.broker->outbox_size(), 3u);
  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return b.got.size() == 3; }, 10000ms));
  run_for(300ms);
  EXPECT_EQ(b.got, (std::vector<std::string>{"R 8", "R 9", "R 10"}));
  EXPECT_EQ(a.got.size(), 10u);
  EXPECT_EQ(a.broker->stats().dropped, 7u);
}

// A peer that reconnects late (its backoff is long) still gets what was
// buffered during the outage: the flush waits until Redis counts as many
// subscribers for the room as the last publish before the outage reached.
TEST_F(RedisBroker, TheFlushAfterAnOutageWaitsForTheEarlierSubscribers) {
  auto& a = add_worker();
  auto& b = add_worker(10000, [](redis_broker_options& o) {
    o.connection.backoff_min = 2000ms;  // reconnects 1-2 s after the outage, long after `a`
    o.connection.backoff_max = 2000ms;
  });
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  a.broker->publish("R", "0");  // its reply tells `a` that R has two subscribers
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 1; }));

  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing() && !b.broker->confirmed("R"); }));
  for (int i = 1; i <= 5; ++i) a.broker->publish("R", std::to_string(i));
  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("R"); }, 5000ms));
  run_for(300ms);
  EXPECT_EQ(a.broker->outbox_size(), 5u) << "flushed before the slow peer was back: it would miss them";

  ASSERT_TRUE(run_until([&] { return b.got.size() == 6; }, 10000ms)) << "the slow peer missed buffered publishes";
  EXPECT_EQ(b.got, (std::vector<std::string>{"R 0", "R 1", "R 2", "R 3", "R 4", "R 5"}));
  EXPECT_EQ(a.broker->stats().missed, 0u);
  EXPECT_EQ(a.broker->stats().dropped, 0u);
}

// A peer that never comes back does not hold the flush forever, and what
// it misses is counted.
TEST_F(RedisBroker, APeerThatNeverComesBackIsCountedAsMissed) {
  auto& a = add_worker(10000, [](redis_broker_options& o) { o.resubscribe_wait = 300ms; });
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  a.broker->publish("R", "0");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 1; }));

  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing(); }));
  b.broker->stop();  // gone for good
  for (int i = 1; i <= 3; ++i) a.broker->publish("R", std::to_string(i));
  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && a.broker->outbox_size() == 0; }, 10000ms));
  EXPECT_EQ(a.broker->stats().missed, 3u);
  EXPECT_EQ(a.got.size(), 4u) << "local members are not affected";
}

TEST_F(RedisBroker, ALostSubscriptionIsRepaired) {
  auto& a = add_worker();
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  // Redis drops every subscriber (as on client-output-buffer-limit).
  EXPECT_EQ(server_.command({"CLIENT", "KILL", "TYPE", "pubsub"}), "2");
  ASSERT_TRUE(run_until([&] { return !b.broker->confirmed("R"); }));
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("R") && b.broker->confirmed("R"); }));
  a.broker->publish("R", "after");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 1; }));
  run_for(200ms);
  EXPECT_EQ(a.got.size(), 1u);
  EXPECT_EQ(b.got, (std::vector<std::string>{"R after"}));
}

// ------------------------------------------- untrusted channel messages
// Anyone who can reach Redis can PUBLISH into a room's channel.

TEST_F(RedisBroker, ForeignMessagesAreDroppedAndCountedByDefault) {
  auto& a = add_worker();
  a.broker->subscribe("R");
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("R"); }));
  EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", "{\"room\":\"R\",\"data\":0}"}), "1");
  a.broker->publish("R", "ours");  // after the foreign one: once it is here, the foreign one was judged
  ASSERT_TRUE(run_until([&] { return !a.got.empty(); }));
  EXPECT_EQ(a.got, (std::vector<std::string>{"R ours"}));
  EXPECT_EQ(a.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::foreign)], 1u);
}

TEST_F(RedisBroker, ForeignMessagesAreDeliveredWhenAskedButStillChecked) {
  auto& a = add_worker(10000, [](redis_broker_options& o) {
    o.foreign = foreign_policy::deliver;
    o.gateway_max_payload = [] { return std::uint64_t{100}; };
  });
  a.broker->subscribe("R");
  ASSERT_TRUE(run_until([&] { return a.broker->confirmed("R"); }));
  EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", "{\"room\":\"R\",\"data\":0}"}), "1");
  EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", std::string(101, 'x')}), "1");
  EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", "caf\xc3"}), "1");
  EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", "last"}), "1");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 2; }));
  run_for(100ms);
  EXPECT_EQ(a.got, (std::vector<std::string>{"R {\"room\":\"R\",\"data\":0}", "R last"}));
  const auto s = a.broker->stats();
  EXPECT_EQ(s.foreign, 2u);
  EXPECT_EQ(s.rejected[static_cast<std::size_t>(inbound_reject::too_big)], 1u);
  EXPECT_EQ(s.rejected[static_cast<std::size_t>(inbound_reject::invalid_utf8)], 1u);
}

// Issue #12: 2 MiB of junk in a room made every subscribed worker forward
// it, the gateway's link decoder refused the envelope and closed the link.
TEST_F(RedisBroker, MessagesAboveTheGatewaysLimitAreDroppedAndCounted) {
  std::uint64_t gateway_limit = 0;  // not told yet
  auto& a = add_worker(10000, [&](redis_broker_options& o) {
    o.max_envelope = 64 * 1024;
    o.gateway_max_payload = [&] { return gateway_limit; };
  });
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  const std::string big(2 * 1024 * 1024, 'j');
  b.broker->publish("R", big);  // a framegate envelope, but above a's own limit
  a.broker->publish("R", "x");
  // The two publishes travel on two connections: a may see "x" before the
  // 2 MiB have reached it, so wait for the rejection too.
  const auto too_big = [&] { return a.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::too_big)]; };
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 2 && too_big() == 1; }));
  EXPECT_EQ(a.got, (std::vector<std::string>{"R x"}));

  gateway_limit = 10;  // a Welcome told a smaller one
  b.broker->publish("R", "0123456789a");
  b.broker->publish("R", "0123456789");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 2; }));
  EXPECT_EQ(a.got.back(), "R 0123456789");
  EXPECT_EQ(too_big(), 2u);
}

TEST_F(RedisBroker, NonUtf8PayloadsNeverReachTheApps) {
  auto& a = add_worker();
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  b.broker->publish("R", "\xff\xfe");
  b.broker->publish("R", "ok");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1; }));
  run_for(100ms);
  EXPECT_EQ(a.got, (std::vector<std::string>{"R ok"}));
  EXPECT_EQ(a.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::invalid_utf8)], 1u);
}

// Issue #12: `fg1 <origin> ffffffffffffffff` silenced that origin until it
// restarted (every later seq looked like a copy sent again).
TEST_F(RedisBroker, AForgedHeaderDoesNotSilenceAnOrigin) {
  auto& a = add_worker();
  auto& b = add_worker();
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  a.broker->publish("R", "before");
  ASSERT_TRUE(run_until([&] { return b.got.size() == 1; }));
  for (const std::uint64_t forged : {~std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{1} << 40})
    EXPECT_EQ(server_.command({"PUBLISH", "framegate:room:R", encode_redis_envelope(a.broker->origin(), forged, "{}")}),
              "2");
  for (int i = 0; i < 3; ++i) a.broker->publish("R", "after" + std::to_string(i));
  ASSERT_TRUE(run_until([&] { return a.got.size() >= 4 && b.got.size() >= 4; }));
  run_for(100ms);
  for (const auto* w : {&a, &b}) {
    const auto& got = w->got;
    EXPECT_NE(std::find(got.begin(), got.end(), "R after0"), got.end());
    EXPECT_NE(std::find(got.begin(), got.end(), "R after1"), got.end());
    EXPECT_NE(std::find(got.begin(), got.end(), "R after2"), got.end());
  }
  // Our own origin with a seq we never published is known to be forged.
  EXPECT_GE(a.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::forged_seq)], 2u);
}

TEST_F(RedisBroker, WithASecretOnlyClusterMembersCanInject) {
  const auto secret = [](redis_broker_options& o) { o.secret = "s3cret"; };
  auto& a = add_worker(10000, secret);
  auto& b = add_worker(10000, secret);
  ASSERT_TRUE(subscribe_both(a, b, "R"));
  const std::string ch = "framegate:room:R";
  const auto origin = a.broker->origin();
  // Without the secret: an old-style header, a wrong key, a MAC for another room.
  server_.command({"PUBLISH", ch, encode_redis_envelope(origin, 1000, "{}")});
  server_.command({"PUBLISH", ch, encode_signed_redis_envelope(envelope_mac("guess"), ch, 77, 1, "{}")});
  server_.command(
      {"PUBLISH", ch, encode_signed_redis_envelope(envelope_mac("s3cret"), "framegate:room:S", 77, 2, "{}")});
  server_.command({"PUBLISH", ch, "{\"foreign\":1}"});
  a.broker->publish("R", "genuine");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 1; }));
  run_for(100ms);
  EXPECT_EQ(b.got, (std::vector<std::string>{"R genuine"}));
  EXPECT_EQ(b.broker->stats().rejected[static_cast<std::size_t>(inbound_reject::bad_mac)], 4u);
  // Delivered locally (joined and published in one turn): the payload alone.
  a.broker->subscribe("L");
  a.broker->publish("L", "local");
  EXPECT_EQ(a.got.back(), "L local");
  // A member's message with a valid MAC is delivered.
  server_.command({"PUBLISH", ch, encode_signed_redis_envelope(envelope_mac("s3cret"), ch, 77, 1, "{\"m\":1}")});
  ASSERT_TRUE(run_until([&] { return b.got.size() == 2; }));
  EXPECT_EQ(b.got.back(), "R {\"m\":1}");
}

TEST_F(RedisBroker, AuthAndSelectWhenConfigured) {
  server_.kill();
  ASSERT_TRUE(server_.start({"--requirepass", "pw"}));
  redis_broker_options o = fast_reconnects();
  o.history_size = 0;
  std::vector<std::string> got;
  auto ep = parse_redis_url("redis://:pw@127.0.0.1:" + std::to_string(server_.port()) + "/2");
  redis_broker good(
      io_, ep, o, [&](std::string_view, std::string_view p, room_position, deflated_segment) { got.emplace_back(p); },
      fg::component_logger("redis-test"));
  ep.password = "wrong";
  redis_broker bad(
      io_, ep, o, [](std::string_view, std::string_view, room_position, deflated_segment) {},
      fg::component_logger("redis-test"));
  good.start();
  bad.start();
  good.subscribe("R");
  ASSERT_TRUE(run_until([&] { return good.flowing() && good.confirmed("R"); }));
  good.publish("R", "x");
  ASSERT_TRUE(run_until([&] { return got.size() == 1; }));
  run_for(200ms);
  EXPECT_FALSE(bad.flowing()) << "a wrong password never counts as connected";
  bad.publish("R", "y");
  EXPECT_EQ(got.size(), 1u);
  good.stop();
  bad.stop();
}

}  // namespace
