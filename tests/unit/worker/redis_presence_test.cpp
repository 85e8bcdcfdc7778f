// Presence against a real redis-server: each broker writes its own share
// of a room's users, reads sum every worker's, a worker that stops
// refreshing drops out after its TTL, and a restarted Redis gets every
// share again.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/unit/worker/redis_broker_fixture.hpp"
#include "worker/broker/presence_scripts.hpp"

namespace {

using namespace fg::worker;
using namespace std::chrono_literals;
using fg::test::worker_under_test;

class RedisPresence : public fg::test::RedisBrokerFixture {
 protected:
  worker_under_test& add(std::chrono::milliseconds ttl = 10s) {
    return add_worker(10000, [ttl](redis_broker_options& o) { o.presence_ttl = ttl; });
  }
  std::optional<presence_result> read(worker_under_test& w, const std::string& room) {
    std::optional<presence_result> got;
    w.broker->presence(room, [&](presence_result r) { got = std::move(r); });
    if (!run_until([&] { return got.has_value(); })) return std::nullopt;
    return got;
  }
  // Whether what `w` reads becomes `want` (writes of other workers travel
  // on their own connections, so a read may come first).
  bool reads(worker_under_test& w, const std::string& room, const std::string& want) {
    std::string got;
    const bool ok = run_until([&] { return (got = members(w, room)) == want; }, 3000ms);
    EXPECT_EQ(got, want);
    return ok;
  }
  // "user=n,..." of what `w` reads, or the error.
  std::string members(worker_under_test& w, const std::string& room) {
    const auto r = read(w, room);
    if (!r) return "timeout";
    if (!r->ok) return "error: " + r->error;
    std::string out;
    for (const auto& m : r->members) out += (out.empty() ? "" : ",") + m.user + "=" + std::to_string(m.connections);
    return out;
  }
};

TEST_F(RedisPresence, ReadsSumEveryWorkersShare) {
  auto& a = add();
  auto& b = add();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && b.broker->flowing(); }));
  a.broker->set_presence("R", "alice", 2);
  a.broker->set_presence("R", "", 1);
  b.broker->set_presence("R", "alice", 1);
  b.broker->set_presence("R", "bob", 1);
  b.broker->set_presence("S", "carol", 1);
  EXPECT_TRUE(reads(a, "R", "=1,alice=3,bob=1"));
  EXPECT_TRUE(reads(b, "S", "carol=1"));
  b.broker->set_presence("R", "bob", 0);
  a.broker->set_presence("R", "alice", 1);
  EXPECT_TRUE(reads(b, "R", "=1,alice=2"));
  EXPECT_TRUE(reads(a, "nobody", ""));
}

TEST_F(RedisPresence, AWorkerThatStopsRefreshingDropsOutAfterItsTtl) {
  auto& a = add(10s);
  auto& b = add(400ms);
  ASSERT_TRUE(run_until([&] { return a.broker->flowing() && b.broker->flowing(); }));
  a.broker->set_presence("R", "alice", 1);
  b.broker->set_presence("R", "bob", 1);
  EXPECT_TRUE(reads(a, "R", "alice=1,bob=1"));
  run_for(800ms);
  EXPECT_EQ(members(a, "R"), "alice=1,bob=1") << "b refreshes every third of its TTL";
  b.broker->stop();  // as if it crashed: its share stays in Redis
  run_for(700ms);
  EXPECT_TRUE(reads(a, "R", "alice=1"));
}

TEST_F(RedisPresence, ARestartedRedisGetsEveryShareAgain) {
  auto& a = add();
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }));
  a.broker->set_presence("R", "alice", 1);
  EXPECT_TRUE(reads(a, "R", "alice=1"));
  server_.kill();
  ASSERT_TRUE(run_until([&] { return !a.broker->flowing(); }));
  EXPECT_TRUE(reads(a, "R", "error: Redis is not connected"));
  a.broker->set_presence("R", "bob", 1);  // while down: kept, written on reconnect
  ASSERT_TRUE(server_.start());
  ASSERT_TRUE(run_until([&] { return a.broker->flowing(); }, 10000ms));
  EXPECT_TRUE(reads(a, "R", "alice=1,bob=1"));
}

TEST(PresenceSum, SkipsWhatIsNotOurs) {
  const std::string o = "0123456789abcdef";
  const std::vector<std::pair<std::string, std::string>> owned{
      {o + "|u", "2"},  {"fedcba9876543210|u", "3"}, {o + "|v", "0"}, {o + "|w", "-1"}, {o + "|x", "1e3"},
      {"short|u", "1"}, {"0123456789ABCDEF|u", "1"}, {o + "u", "1"},  {o + "|", "4"}};
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  for (const auto& [f, v] : owned) fields.emplace_back(f, v);
  const auto got = sum_presence(fields);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].user, "");
  EXPECT_EQ(got[0].connections, 4u);
  EXPECT_EQ(got[1].user, "u");
  EXPECT_EQ(got[1].connections, 5u);
}

}  // namespace
