// The header the Redis broker puts before every published payload.
#include "worker/broker/redis_envelope.hpp"

#include <gtest/gtest.h>

namespace {

using namespace fg::worker;

TEST(RedisEnvelope, RoundTripsAndKeepsThePayloadUnchanged) {
  const std::string payload = "{\"room\":\"R\",\"data\":\"a\\nb\"}\n\x01";
  const auto wire = encode_redis_envelope(0xfedcba9876543210ull, 42, payload);
  EXPECT_EQ(wire.size(), redis_envelope_header_bytes + payload.size());
  EXPECT_EQ(wire.substr(0, redis_envelope_header_bytes), "fg1 fedcba9876543210 000000000000002a\n");
  const auto env = parse_redis_envelope(wire);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->origin, 0xfedcba9876543210ull);
  EXPECT_EQ(env->seq, 42u);
  EXPECT_EQ(env->payload, payload);
}

TEST(RedisEnvelope, EmptyPayload) {
  const auto env = parse_redis_envelope(encode_redis_envelope(1, 2, ""));
  ASSERT_TRUE(env);
  EXPECT_TRUE(env->payload.empty());
}

TEST(RedisEnvelope, ForeignMessagesAreNotEnvelopes) {
  EXPECT_FALSE(parse_redis_envelope(""));
  EXPECT_FALSE(parse_redis_envelope("{\"room\":\"R\",\"data\":1}"));
  EXPECT_FALSE(parse_redis_envelope("fg1 short"));
  std::string wire = encode_redis_envelope(1, 2, "x");
  wire[10] = 'G';  // not hex
  EXPECT_FALSE(parse_redis_envelope(wire));
  wire = encode_redis_envelope(1, 2, "x");
  wire[37] = ' ';
  EXPECT_FALSE(parse_redis_envelope(wire));
  wire = encode_redis_envelope(1, 2, "x");
  wire[2] = '2';  // another version
  EXPECT_FALSE(parse_redis_envelope(wire));
}

}  // namespace
