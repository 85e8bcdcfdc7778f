// A Redis connection's earlier lives that the server still holds (after a
// partition) are removed when it reconnects, against a real redis-server.
// A partition is played without root: the test keeps a duplicate of the
// connection's socket open, so that giving the connection up sends no FIN
// and the server keeps the client, as it would behind a dead network.
#include "worker/broker/redis_connection.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <hiredis/async.h>
#include <boost/asio/io_context.hpp>

#include "common/logging.hpp"
#include "tests/unit/worker/redis_server.hpp"
#include "tests/unit/worker/run_loop.hpp"
#include "worker/broker/host_resolver.hpp"
#include "worker/broker/redis_url.hpp"

namespace fg::test {
namespace {

using namespace fg::worker;
using namespace std::chrono_literals;

struct counting_listener : redis_connection::listener {
  int ready = 0, down = 0;
  void on_ready(redis_connection&) override { ++ready; }
  void on_down(redis_connection&, std::string_view) override { ++down; }
};

// Whether CLIENT LIST shows a client with this id.
bool listed(const redis_server& redis, std::uint64_t id) {
  const std::string list = redis.command({"CLIENT", "LIST"});
  const std::string needle = "id=" + std::to_string(id) + " ";
  return list.starts_with(needle) || list.find("\n" + needle) != std::string::npos;
}

class RedisConnection : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.start()) << "redis-server did not start"; }
  void TearDown() override { redis_.kill(); }

  std::unique_ptr<redis_connection> connect(redis_endpoint endpoint) {
    redis_connection_options o;
    o.backoff_min = 20ms;
    o.backoff_max = 100ms;
    auto c = std::make_unique<redis_connection>(io_, std::move(endpoint), "test", o, listener_,
                                                fg::component_logger("redis-test"), 1);
    c->start();
    EXPECT_TRUE(run_until(io_, [&] { return listener_.ready == 1; }));
    return c;
  }

  // Gives the connection up the way a partition does: the server is not
  // told. Returns the client id the server knows it by.
  std::uint64_t lose_silently(redis_connection& c) {
    kept_fd_ = ::dup(c.context()->c.fd);
    EXPECT_GE(kept_fd_, 0);
    c.abort("the test cut it");
    EXPECT_EQ(listener_.down, 1);
    EXPECT_EQ(c.stale().size(), 1u);
    return c.stale().empty() ? 0 : c.stale().front().id;
  }

  ~RedisConnection() override {
    if (kept_fd_ >= 0) ::close(kept_fd_);
  }

  redis_server redis_;
  boost::asio::io_context io_;
  counting_listener listener_;
  int kept_fd_ = -1;
};

TEST_F(RedisConnection, RemovesItsEarlierLifeThatTheServerStillHolds) {
  auto c = connect(parse_redis_url(redis_.url()));
  const std::uint64_t old_id = lose_silently(*c);
  ASSERT_NE(old_id, 0u);
  EXPECT_TRUE(listed(redis_, old_id)) << "the server should still hold the connection given up";

  ASSERT_TRUE(run_until(io_, [&] { return listener_.ready == 2 && c->stale().empty(); }));
  EXPECT_EQ(c->stale_removed(), 1u);
  EXPECT_FALSE(listed(redis_, old_id));
  // The new connection itself is untouched.
  EXPECT_TRUE(c->ready());
}

TEST_F(RedisConnection, ANewConnectionRemovesTheStaleOnesOfAnother) {
  // The publish connection does this for the subscribe one, before the
  // subscribe connection is back itself.
  counting_listener other_listener;
  redis_connection_options o;
  o.backoff_min = 10'000ms;  // stays down for the whole test
  o.backoff_max = 10'000ms;
  redis_connection other(io_, parse_redis_url(redis_.url()), "other", o, other_listener,
                         fg::component_logger("redis-test"), 2);
  other.start();
  ASSERT_TRUE(run_until(io_, [&] { return other_listener.ready == 1; }));
  kept_fd_ = ::dup(other.context()->c.fd);
  other.abort("the test cut it");
  ASSERT_EQ(other.stale().size(), 1u);
  const std::uint64_t old_id = other.stale().front().id;

  auto c = connect(parse_redis_url(redis_.url()));
  c->remove_stale_of(other);
  ASSERT_TRUE(run_until(io_, [&] { return other.stale().empty(); }));
  EXPECT_EQ(other.stale_removed(), 1u);
  EXPECT_EQ(c->stale_removed(), 0u);
  EXPECT_FALSE(listed(redis_, old_id));
  EXPECT_EQ(other_listener.ready, 1) << "the other connection is still waiting to reconnect";
}

TEST_F(RedisConnection, AConnectionTheServerClosedLeavesNothingToRemove) {
  auto c = connect(parse_redis_url(redis_.url()));
  redis_.command({"CLIENT", "KILL", "SKIPME", "yes", "LADDR", "127.0.0.1:" + std::to_string(redis_.port())});
  ASSERT_TRUE(run_until(io_, [&] { return listener_.down == 1; }));
  EXPECT_TRUE(c->stale().empty());
  ASSERT_TRUE(run_until(io_, [&] { return listener_.ready == 2; }));
  EXPECT_EQ(c->stale_removed(), 0u);
}

TEST_F(RedisConnection, AUserWithoutClientKillKeepsWorkingAndForgetsTheStaleOne) {
  ASSERT_EQ(redis_.command({"ACL", "SETUSER", "fg", "on", ">pw", "~*", "&*", "+@all", "-client|kill"}), "OK");
  auto c = connect(parse_redis_url("redis://fg:pw@127.0.0.1:" + std::to_string(redis_.port())));
  const std::uint64_t old_id = lose_silently(*c);

  ASSERT_TRUE(run_until(io_, [&] { return listener_.ready == 2 && c->stale().empty(); }));
  EXPECT_EQ(c->stale_removed(), 0u);
  EXPECT_TRUE(listed(redis_, old_id)) << "NOPERM: the server keeps it";
  EXPECT_TRUE(c->ready());
}

TEST_F(RedisConnection, ResolvesAHostNameOffTheLoopAndConnects) {
  auto c = connect(parse_redis_url("redis://localhost:" + std::to_string(redis_.port())));
  EXPECT_TRUE(c->ready());
}

TEST_F(RedisConnection, ANameThatDoesNotResolveIsSaidAndTriedAgain) {
  redis_connection_options o;
  o.backoff_min = 10ms;
  o.backoff_max = 20ms;
  o.connect_timeout = 500ms;
  // .invalid never resolves (RFC 6761).
  redis_connection c(io_, parse_redis_url("redis://framegate-test.invalid:6379"), "test", o, listener_,
                     fg::component_logger("redis-test"), 1);
  c.start();
  ASSERT_TRUE(run_until(
      io_, [&] { return c.failures_since_ready() >= 2; }, 10s));
  EXPECT_EQ(listener_.ready, 0);
  EXPECT_FALSE(c.ready());
}

std::vector<boost::asio::ip::address> resolved(std::initializer_list<const char*> addresses) {
  std::vector<boost::asio::ip::address> out;
  for (const char* a : addresses) out.push_back(boost::asio::ip::make_address(a));
  return out;
}

TEST(AddressForAttempt, IPv4FirstThenEachFailureTakesTheNext) {
  const auto results = resolved({"::1", "10.0.0.2", "fd00::2", "10.0.0.3", "10.0.0.2"});
  EXPECT_EQ(address_for_attempt(results, 0), "10.0.0.2");
  EXPECT_EQ(address_for_attempt(results, 1), "10.0.0.3");
  EXPECT_EQ(address_for_attempt(results, 2), "::1");
  EXPECT_EQ(address_for_attempt(results, 3), "fd00::2");
  EXPECT_EQ(address_for_attempt(results, 4), "10.0.0.2");  // duplicates count once; round again
}

TEST(AddressForAttempt, NothingResolvedIsNoAddress) { EXPECT_EQ(address_for_attempt(resolved({}), 0), ""); }

TEST(HostResolver, AnswersOnTheLoop) {
  boost::asio::io_context io;
  host_resolver r(io);
  std::vector<boost::asio::ip::address> got;
  std::string error = "not answered";
  r.resolve("localhost", 6379, [&](std::vector<boost::asio::ip::address> a, std::string e) {
    got = std::move(a);
    error = std::move(e);
  });
  ASSERT_TRUE(run_until(io, [&] { return error != "not answered"; }));
  EXPECT_EQ(error, "");
  EXPECT_NE(std::find(got.begin(), got.end(), boost::asio::ip::make_address("127.0.0.1")), got.end());
}

TEST(HostResolver, SaysWhyANameHasNoAddress) {
  boost::asio::io_context io;
  host_resolver r(io);
  std::string error;
  bool answered = false;
  r.resolve("framegate-test.invalid", 6379, [&](std::vector<boost::asio::ip::address> a, std::string e) {
    answered = true;
    EXPECT_TRUE(a.empty());
    error = std::move(e);
  });
  ASSERT_TRUE(run_until(
      io, [&] { return answered; }, 15s));
  EXPECT_NE(error, "");
}

TEST(HostResolver, AnAnswerAfterTheResolverIsGoneIsDropped) {
  boost::asio::io_context io;
  bool answered = false;
  {
    host_resolver r(io);
    r.resolve("localhost", 6379, [&](std::vector<boost::asio::ip::address>, std::string) { answered = true; });
  }
  // The lookup thread still answers; nothing reaches the callback.
  (void)run_until(
      io, [] { return false; }, 300ms);
  EXPECT_FALSE(answered);
}

}  // namespace
}  // namespace fg::test
