// The two command lines of parse_worker_config: framegate-worker's, which
// chooses among the built-in apps, and that of a worker built on the SDK
// (fg::worker::run), which mounts its own apps and must not offer those
// options, nor reject its own paths as unknown built-ins.
#include "worker/config.hpp"

#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fg::worker {
namespace {

// argv for the parser: owns the strings, hands out char*.
class args {
 public:
  args(std::initializer_list<std::string> list) : strings_(list) {
    for (auto& s : strings_) pointers_.push_back(s.data());
  }
  int argc() { return static_cast<int>(pointers_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

const worker_program sdk_program{"hello-worker", false};

TEST(WorkerConfig, FramegateWorkerChoosesBuiltinApps) {
  args a{"framegate-worker", "--apps", "/echo,/shout", "--link-dir", "/run/fg"};
  const auto cfg = parse_worker_config(a.argc(), a.argv());
  EXPECT_EQ(cfg.apps, (std::vector<std::string>{"/echo", "/shout"}));
  EXPECT_EQ(cfg.link_dir, "/run/fg");
}

TEST(WorkerConfig, SdkWorkerTakesTheSameRuntimeOptions) {
  args a{"hello-worker", "--id", "h1", "--link-dir", "/run/fg", "--admin", "off", "--max-envelope", "1048576"};
  const auto cfg = parse_worker_config(a.argc(), a.argv(), sdk_program);
  EXPECT_EQ(cfg.id, "h1");
  EXPECT_EQ(cfg.link_dir, "/run/fg");
  EXPECT_FALSE(cfg.admin.has_value());
  EXPECT_EQ(cfg.link.max_envelope, 1048576u);
  EXPECT_TRUE(cfg.apps.empty());
}

TEST(WorkerConfigDeathTest, SdkWorkerHasNoBuiltinAppOptions) {
  args a{"hello-worker", "--apps", "/hello"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv(), sdk_program), testing::ExitedWithCode(2),
              "^hello-worker: The following arguments were not expected: /hello --apps");
}

TEST(WorkerConfigDeathTest, FramegateWorkerRejectsAPathNoBuiltinServes) {
  args a{"framegate-worker", "--apps", "/hello"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2),
              "^framegate-worker: --apps: no built-in app at '/hello'");
}

TEST(WorkerConfig, RedisClusterSeeds) {
  args a{"framegate-worker", "--redis-cluster", "10.0.0.1:7000,10.0.0.2:7001"};
  const auto cfg = parse_worker_config(a.argc(), a.argv());
  EXPECT_FALSE(cfg.redis.has_value());
  ASSERT_EQ(cfg.redis_cluster.size(), 2u);
  EXPECT_EQ(cfg.redis_cluster[1].host, "10.0.0.2");
  EXPECT_EQ(cfg.redis_cluster[1].port, 7001);
}

TEST(WorkerConfigDeathTest, RedisAndRedisClusterExcludeEachOther) {
  args a{"framegate-worker", "--redis", "redis://h:1", "--redis-cluster", "h:7000"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2),
              "^framegate-worker: --redis and --redis-cluster: choose one");
}

TEST(WorkerConfigDeathTest, RedisClusterSeedsMustBeHostPort) {
  args a{"framegate-worker", "--redis-cluster", "unix:///tmp/r.sock"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2),
              "^framegate-worker: --redis-cluster: seeds are HOST:PORT, not Unix sockets");
}

TEST(WorkerConfigDeathTest, AClusterChannelPrefixHoldsNoBrace) {
  args a{"framegate-worker", "--redis-cluster", "h:7000", "--channel-prefix", "{app}:"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2),
              "^framegate-worker: --channel-prefix: no '\\{' or '\\}' with --redis-cluster");
}

TEST(WorkerConfig, PoolShedPeriodInSecondsAndZeroTurnsItOff) {
  args plain{"framegate-worker"};
  EXPECT_EQ(parse_worker_config(plain.argc(), plain.argv()).pool_shed_period, std::chrono::milliseconds(10000));
  args half{"framegate-worker", "--pool-shed-period", "0.5"};
  EXPECT_EQ(parse_worker_config(half.argc(), half.argv()).pool_shed_period, std::chrono::milliseconds(500));
  args off{"framegate-worker", "--pool-shed-period", "0"};
  EXPECT_EQ(parse_worker_config(off.argc(), off.argv()).pool_shed_period, std::chrono::milliseconds(0));
}

TEST(WorkerConfig, RedisTimeoutInSeconds) {
  args plain{"framegate-worker"};
  EXPECT_EQ(parse_worker_config(plain.argc(), plain.argv()).redis_timeout, std::chrono::milliseconds(10000));
  args set{"framegate-worker", "--redis-timeout", "2.5"};
  EXPECT_EQ(parse_worker_config(set.argc(), set.argv()).redis_timeout, std::chrono::milliseconds(2500));
}

TEST(WorkerConfigDeathTest, RedisTimeoutIsAtLeastASecond) {
  // Keepalive's schedule is in whole seconds; below one the kernel's
  // probes could not come before the connection is given up.
  args a{"framegate-worker", "--redis-timeout", "0.5"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2), "--redis-timeout");
}

TEST(WorkerConfigDeathTest, PoolShedPeriodIsNotNegative) {
  args a{"framegate-worker", "--pool-shed-period", "-1"};
  EXPECT_EXIT(parse_worker_config(a.argc(), a.argv()), testing::ExitedWithCode(2), "--pool-shed-period");
}

}  // namespace
}  // namespace fg::worker
