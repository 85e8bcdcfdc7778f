// --redis URL parsing: every accepted form, and one-line errors that never
// echo the password.
#include "worker/broker/redis_url.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using fg::worker::parse_redis_url;

std::string error_of(const std::string& url) {
  try {
    parse_redis_url(url);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RedisUrl, HostAndPort) {
  const auto ep = parse_redis_url("redis://127.0.0.1:6380");
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 0);
  EXPECT_TRUE(ep.password.empty());
  EXPECT_FALSE(ep.is_unix());
}

TEST(RedisUrl, DefaultsPortAndDb) {
  const auto ep = parse_redis_url("redis://redis");
  EXPECT_EQ(ep.host, "redis");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(parse_redis_url("redis://redis/").db, 0);
}

TEST(RedisUrl, UserPasswordAndDb) {
  const auto ep = parse_redis_url("redis://app:s3cret@cache.local:7000/3");
  EXPECT_EQ(ep.user, "app");
  EXPECT_EQ(ep.password, "s3cret");
  EXPECT_EQ(ep.host, "cache.local");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.db, 3);
}

TEST(RedisUrl, PasswordOnly) {
  const auto ep = parse_redis_url("redis://:pw@h:1");
  EXPECT_TRUE(ep.user.empty());
  EXPECT_EQ(ep.password, "pw");
}

TEST(RedisUrl, PercentEncodedAndRawAtInPassword) {
  EXPECT_EQ(parse_redis_url("redis://:p%40ss%2Fw@h:1").password, "p@ss/w");
  EXPECT_EQ(parse_redis_url("redis://:p@ss@h:1").password, "p@ss");
}

TEST(RedisUrl, BracketedIpv6) {
  const auto ep = parse_redis_url("redis://[::1]:6390/1");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 6390);
  EXPECT_EQ(ep.db, 1);
}

TEST(RedisUrl, UnixSocketWithDbAndPassword) {
  auto ep = parse_redis_url("unix:///run/redis/redis.sock");
  EXPECT_TRUE(ep.is_unix());
  EXPECT_EQ(ep.unix_path, "/run/redis/redis.sock");
  EXPECT_EQ(ep.db, 0);
  ep = parse_redis_url("unix:///tmp/r.sock?db=5&password=x%26y");
  EXPECT_EQ(ep.unix_path, "/tmp/r.sock");
  EXPECT_EQ(ep.db, 5);
  EXPECT_EQ(ep.password, "x&y");
}

TEST(RedisUrl, DescribeNeverShowsThePassword) {
  EXPECT_EQ(parse_redis_url("redis://u:topsecret@h:1/2").describe(), "redis://u:***@h:1/2");
  EXPECT_EQ(parse_redis_url("redis://:topsecret@h").describe(), "redis://:***@h:6379");
  EXPECT_EQ(parse_redis_url("redis://h").describe(), "redis://h:6379");
  EXPECT_EQ(parse_redis_url("unix:///s?db=2&user=u&password=topsecret").describe(),
            "unix:///s?db=2&user=u&password=***");
}

TEST(RedisUrl, APasswordFromAFileJoinsTheUrlsUser) {
  auto ep = parse_redis_url("redis://app@h:1", "fromfile");
  EXPECT_EQ(ep.user, "app");
  EXPECT_EQ(ep.password, "fromfile");
  EXPECT_EQ(ep.describe(), "redis://app:***@h:1");
  ep = parse_redis_url("redis://h", "fromfile");
  EXPECT_EQ(ep.user, "");
  EXPECT_EQ(ep.password, "fromfile");
  ep = parse_redis_url("unix:///s?user=app", "fromfile");
  EXPECT_EQ(ep.user, "app");
  EXPECT_EQ(ep.password, "fromfile");
}

TEST(RedisUrl, APasswordInBothPlacesIsRefused) {
  try {
    (void)parse_redis_url("redis://:inurl@h", "fromfile");
    FAIL() << "accepted two passwords";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--redis-password-file"), std::string::npos) << what;
    EXPECT_EQ(what.find("inurl"), std::string::npos) << what;
  }
}

struct bad_case {
  const char* url;
  const char* expected;  // a substring of the message
};

class RedisUrlErrors : public ::testing::TestWithParam<bad_case> {};

TEST_P(RedisUrlErrors, AreOneLineAndNamed) {
  const std::string msg = error_of(GetParam().url);
  ASSERT_FALSE(msg.empty()) << GetParam().url << " was accepted";
  EXPECT_EQ(msg.rfind("--redis: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
  EXPECT_EQ(msg.find("hunter2"), std::string::npos) << "the password leaked: " << msg;
}

INSTANTIATE_TEST_SUITE_P(
    All, RedisUrlErrors,
    ::testing::Values(bad_case{"", "empty URL"}, bad_case{"localhost:6379", "expected redis://"},
                      bad_case{"http://h:1", "unsupported scheme 'http'"}, bad_case{"rediss://h:1", "TLS"},
                      bad_case{"redis://", "no host"}, bad_case{"redis://:6379", "no host"},
                      bad_case{"redis://h:", "empty port"}, bad_case{"redis://h:0", "port 0"},
                      bad_case{"redis://h:65536", "port '65536'"}, bad_case{"redis://h:12ab", "port '12ab'"},
                      bad_case{"redis://h:1/x", "db 'x'"}, bad_case{"redis://h:1/-1", "db '-1'"},
                      bad_case{"redis://user@h:1", "need a password"}, bad_case{"redis://u:@h:1", "empty password"},
                      bad_case{"redis://:hunter2%zz@h:1", "percent-encoding"}, bad_case{"redis://[::1:1", "'['"},
                      bad_case{"redis://h:1?db=2", "unexpected '?db=2'"}, bad_case{"unix://", "absolute"},
                      bad_case{"unix://relative.sock", "absolute"}, bad_case{"unix:///s?db=a", "db 'a'"},
                      bad_case{"unix:///s?timeout=1", "unknown parameter 'timeout'"},
                      bad_case{"unix:///s?user=u", "without a password"}));

}  // namespace
