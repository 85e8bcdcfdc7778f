// The Redis Cluster broker against a real one-node cluster (every slot on
// one redis-server started with --cluster-enabled): sharded channels and
// subscriptions, every message once and in order (large ones too, read in
// pieces by the reply sink), publishes the cluster refuses while a slot
// has no owner (CLUSTERDOWN) sent again, in order, once it has one, a
// seed whose map lacks a slot left for one whose map is whole, a seed
// that refuses connections left at once, not after the topology timeout,
// and a seed whose map names a dead primary left after the timeout.
// Slot moves and failovers between nodes: tests/integration/redis.
#include "worker/broker/redis_cluster_broker.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/logging.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"
#include "tests/unit/worker/redis_server.hpp"
#include "tests/unit/worker/run_loop.hpp"
#include "worker/broker/cluster_slots.hpp"
#include "worker/broker/redis_url.hpp"

namespace {

using namespace fg::worker;
using namespace std::chrono_literals;

struct member {
  std::vector<std::string> got;  // "room payload"
  std::vector<std::uint64_t> offsets;
  std::unique_ptr<redis_cluster_broker> broker;
};

class RedisClusterBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fg::test::redis_server::installed()) GTEST_SKIP() << "redis-server is not installed";
    ASSERT_TRUE(
        server_.start({"--cluster-enabled", "yes", "--cluster-config-file", dir_ + "/nodes.conf", "--dir", dir_}));
    ASSERT_EQ(server_.command({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "OK");
    ASSERT_TRUE(wait_for([&] {
      return server_.command({"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos;
    }));
  }
  void TearDown() override {
    for (auto& m : members_) m->broker->stop();
    server_.kill();
  }

  static bool wait_for(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  // Seeds: "127.0.0.1:PORT,..."; the cluster's node by default.
  member& add_member(const std::string& seeds = {}, std::chrono::milliseconds topology_timeout = 2000ms) {
    auto m = std::make_unique<member>();
    redis_cluster_options o;
    o.topology_timeout = topology_timeout;
    o.seeds = parse_cluster_seeds(seeds.empty() ? "127.0.0.1:" + std::to_string(server_.port()) : seeds, std::nullopt);
    o.shard.connection.backoff_min = 20ms;
    o.shard.connection.backoff_max = 200ms;
    o.refresh_retry = 50ms;
    auto* raw = m.get();
    m->broker = std::make_unique<redis_cluster_broker>(
        io_, o,
        [raw](std::string_view room, std::string_view payload, room_position at, deflated_segment) {
          raw->got.push_back(std::string(room) + " " + std::string(payload));
          raw->offsets.push_back(at.offset);
        },
        fg::component_logger("redis-cluster-test"));
    m->broker->start();
    members_.push_back(std::move(m));
    return *members_.back();
  }

  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
    return fg::test::run_until(io_, done, limit);
  }

  std::string shard_numsub(const std::string& channel) const {
    return server_.command({"PUBSUB", "SHARDNUMSUB", channel});
  }
  bool subscribed(const std::string& room, int n) {
    return run_until([&] {
      return shard_numsub("framegate:{room:" + room + "}") == "framegate:{room:" + room + "} " + std::to_string(n);
    });
  }

  fg::test::redis_server server_{fg::test::redis_server::cluster_node_tag{}};
  fg::test::scoped_temp_dir tmp_{"fg-cluster-test"};
  const std::string dir_ = tmp_.path().native();
  boost::asio::io_context io_;
  std::vector<std::unique_ptr<member>> members_;
};

TEST_F(RedisClusterBroker, APublishReachesEveryMemberOnceWithItsOffset) {
  member& a = add_member();
  member& b = add_member();
  ASSERT_TRUE(run_until([&] { return a.broker->report().up && b.broker->report().up; }));
  a.broker->subscribe("lobby");
  b.broker->subscribe("lobby");
  b.broker->subscribe("a{b}");  // braces in a name: the channel keeps its own hash tag
  ASSERT_TRUE(subscribed("lobby", 2));
  ASSERT_TRUE(subscribed("a{b}", 1));
  a.broker->publish("lobby", "one");
  b.broker->publish("a{b}", "two");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1 && b.got.size() == 2; }));
  io_.restart();
  io_.run_for(100ms);
  EXPECT_EQ(a.got, (std::vector<std::string>{"lobby one"}));
  EXPECT_EQ(a.offsets, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(b.got.size(), 2u);
  const broker_report r = a.broker->report();
  EXPECT_STREQ(r.kind, "redis-cluster");
  EXPECT_EQ(r.cluster_shards, 1u);
  EXPECT_GE(r.cluster_map_refreshes, 1u);
  EXPECT_EQ(r.gaps, 0u);
  // History keys share the channel's slot (the script ran on the cluster).
  EXPECT_NE(server_.command({"EXISTS", "framegate:{room:a{b}}:h"}), "0");
}

TEST_F(RedisClusterBroker, ManyAndLargeMessagesArriveOnceAndInOrder) {
  member& a = add_member();
  member& b = add_member();
  ASSERT_TRUE(run_until([&] { return a.broker->report().up && b.broker->report().up; }));
  const std::vector<std::string> rooms{"r0", "r1", "r2", "r3", "r4"};
  for (const auto& room : rooms) b.broker->subscribe(room);
  for (const auto& room : rooms) ASSERT_TRUE(subscribed(room, 1));
  // 300 KiB messages arrive over many reads: the reply sink must put them together.
  const std::string big(300 * 1024, 'x');
  std::vector<std::string> want;
  for (int n = 0; n < 200; ++n) {
    const std::string& room = rooms[static_cast<std::size_t>(n) % rooms.size()];
    const std::string payload = std::to_string(n) + (n % 20 == 0 ? big : "");
    a.broker->publish(room, payload);
    want.push_back(room + " " + payload);
  }
  ASSERT_TRUE(run_until([&] { return b.got.size() >= want.size(); }, 10000ms)) << b.got.size();
  io_.restart();
  io_.run_for(100ms);
  EXPECT_EQ(b.got, want);
}

TEST_F(RedisClusterBroker, PublishesRefusedWhileTheSlotHasNoOwnerAreSentAgainInOrder) {
  member& a = add_member();
  ASSERT_TRUE(run_until([&] { return a.broker->report().up; }));
  a.broker->subscribe("held");
  ASSERT_TRUE(subscribed("held", 1));
  const std::string slot = std::to_string(key_hash_slot("framegate:{room:held}"));
  a.broker->publish("held", "before");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1; }));
  // The slot loses its owner: the cluster answers CLUSTERDOWN.
  ASSERT_EQ(server_.command({"CLUSTER", "DELSLOTS", slot}), "OK");
  for (int n = 1; n <= 5; ++n) a.broker->publish("held", "during " + std::to_string(n));
  ASSERT_TRUE(run_until([&] { return a.broker->report().cluster_redirects > 0; }));
  io_.restart();
  io_.run_for(200ms);
  ASSERT_EQ(server_.command({"CLUSTER", "ADDSLOTS", slot}), "OK");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 6; }, 10000ms)) << a.got.size();
  EXPECT_EQ(a.got, (std::vector<std::string>{"held before", "held during 1", "held during 2", "held during 3",
                                             "held during 4", "held during 5"}));
  const broker_report r = a.broker->report();
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_GE(r.cluster_redirects, 1u);
}

TEST_F(RedisClusterBroker, ASeedWhoseMapLacksASlotIsLeftForTheNextNode) {
  // The first seed's own view gives slot 16383 to no shard, for good (as
  // a node that lost a slot to redis-server 7.0's bug does); reading it
  // again and again would leave the rooms of that slot without a shard.
  // The second seed maps every slot.
  fg::test::scoped_temp_dir partial_dir{"fg-cluster-partial"};
  fg::test::redis_server partial{fg::test::redis_server::cluster_node_tag{}};
  const std::string dir = partial_dir.path().native();
  ASSERT_TRUE(partial.start({"--cluster-enabled", "yes", "--cluster-config-file", dir + "/nodes.conf", "--dir", dir}));
  ASSERT_EQ(partial.command({"CLUSTER", "ADDSLOTSRANGE", "0", "16382"}), "OK");

  member& a =
      add_member("127.0.0.1:" + std::to_string(partial.port()) + ",127.0.0.1:" + std::to_string(server_.port()));
  ASSERT_TRUE(run_until([&] { return a.broker->report().up; }))
      << a.broker->report().cluster_slots_unmapped << " slots unmapped";
  broker_report r = a.broker->report();
  EXPECT_EQ(r.cluster_slots_unmapped, 0u);
  EXPECT_GE(r.cluster_map_refreshes, 2u);  // the partial map, then the whole one
  // The whole map stays: later reads ask the node that gave it.
  io_.restart();
  io_.run_for(300ms);
  EXPECT_EQ(a.broker->report().cluster_slots_unmapped, 0u);

  // A room in the slot the first seed lacks works.
  std::string room = "r0";
  for (int i = 1; key_hash_slot("framegate:{room:" + room + "}") != 16383; ++i) room = "r" + std::to_string(i);
  a.broker->subscribe(room);
  ASSERT_TRUE(subscribed(room, 1));
  a.broker->publish(room, "whole");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1; }));
  EXPECT_EQ(a.got, (std::vector<std::string>{room + " whole"}));
  partial.kill();
}

// A loopback port bound but not listening, for as long as it lives: a
// connection to it is refused (RST), as one to a killed node is.
class refusing_port {
 public:
  refusing_port() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~refusing_port() {
    if (fd_ >= 0) ::close(fd_);
  }
  refusing_port(const refusing_port&) = delete;
  refusing_port& operator=(const refusing_port&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

TEST_F(RedisClusterBroker, ASeedThatRefusesConnectionsIsLeftWithoutWaitingForTheTimeout) {
  // The first seed is a node that is gone (its port refuses); the topology
  // timeout is far longer than the test waits, so only leaving the seed
  // when its connection fails gets the map from the second.
  const refusing_port gone;
  ASSERT_NE(gone.port(), 0);
  member& a =
      add_member("127.0.0.1:" + std::to_string(gone.port()) + ",127.0.0.1:" + std::to_string(server_.port()), 60s);
  ASSERT_TRUE(run_until([&] { return a.broker->mapped() && a.broker->report().up; }))
      << "no slot map from the second seed while the first refuses";
  a.broker->subscribe("after");
  ASSERT_TRUE(subscribed("after", 1));
  a.broker->publish("after", "mapped");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1; }));
  EXPECT_EQ(a.got, (std::vector<std::string>{"after mapped"}));
}

TEST_F(RedisClusterBroker, ASeedWhoseMapKeepsNamingADeadPrimaryIsLeftAfterTheTopologyTimeout) {
  // The first seed answers, but with the view of a node cut off from the
  // cluster's majority: every slot on a primary that is gone (killed here;
  // alone, the seed can never mark it failed, so its map never changes).
  // The second seed stands for the majority, whose map works.
  fg::test::scoped_temp_dir stale_dir{"fg-cluster-stale"}, dead_dir{"fg-cluster-dead"};
  fg::test::redis_server stale{fg::test::redis_server::cluster_node_tag{}};
  fg::test::redis_server dead{fg::test::redis_server::cluster_node_tag{}};
  const std::string sd = stale_dir.path().native(), dd = dead_dir.path().native();
  ASSERT_TRUE(stale.start({"--cluster-enabled", "yes", "--cluster-config-file", sd + "/nodes.conf", "--dir", sd}));
  ASSERT_TRUE(dead.start({"--cluster-enabled", "yes", "--cluster-config-file", dd + "/nodes.conf", "--dir", dd}));
  ASSERT_EQ(stale.command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(dead.port())}), "OK");
  ASSERT_EQ(dead.command({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "OK");
  ASSERT_TRUE(wait_for([&] {
    return stale.command({"CLUSTER", "INFO"}).find("cluster_slots_assigned:16384") != std::string::npos;
  })) << "the stale seed never learned the other node's slots";
  dead.kill();

  member& a =
      add_member("127.0.0.1:" + std::to_string(stale.port()) + ",127.0.0.1:" + std::to_string(server_.port()), 500ms);
  ASSERT_TRUE(run_until([&] { return a.broker->report().up; }, 8000ms))
      << "still on the stale seed's map: " << a.broker->report().cluster_shards << " shards";
  a.broker->subscribe("majority");
  ASSERT_TRUE(subscribed("majority", 1));
  a.broker->publish("majority", "heard");
  ASSERT_TRUE(run_until([&] { return a.got.size() == 1; }));
  EXPECT_EQ(a.got, (std::vector<std::string>{"majority heard"}));
  // The working map stays: the stale seed is not read again while it works.
  io_.restart();
  io_.run_for(1500ms);
  EXPECT_TRUE(a.broker->report().up);
  stale.kill();
}

}  // namespace
