// The header the Redis broker puts before every published payload.
#include "worker/broker/redis_envelope.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "worker/broker/envelope_mac.hpp"

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

// ------------------------------------------- version 2: authenticated

TEST(RedisEnvelope, SignedEnvelopesCarryAMacOverChannelHeaderAndPayload) {
  const envelope_mac mac("cluster secret");
  const auto wire = encode_signed_redis_envelope(mac, "framegate:room:R", 0xab, 7, "{\"x\":1}");
  ASSERT_EQ(wire.size(), redis_signed_header_bytes + 7);
  EXPECT_EQ(wire.substr(0, 38), "fg2 00000000000000ab 0000000000000007 ");
  EXPECT_EQ(wire[102], '\n');
  const auto env = parse_redis_envelope(wire);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->version, 2);
  EXPECT_EQ(env->origin, 0xabu);
  EXPECT_EQ(env->seq, 7u);
  EXPECT_EQ(env->payload, "{\"x\":1}");
  EXPECT_TRUE(mac.verify("framegate:room:R", env->signed_prefix, env->payload, env->mac));
  EXPECT_FALSE(mac.verify("framegate:room:S", env->signed_prefix, env->payload, env->mac)) << "moved to another room";
  EXPECT_FALSE(mac.verify("framegate:room:R", env->signed_prefix, "{\"x\":2}", env->mac)) << "payload changed";
  EXPECT_FALSE(envelope_mac("other").verify("framegate:room:R", env->signed_prefix, env->payload, env->mac));
  std::string seq_changed = wire;
  seq_changed[36] = '8';
  const auto forged = parse_redis_envelope(seq_changed);
  ASSERT_TRUE(forged);
  EXPECT_FALSE(mac.verify("framegate:room:R", forged->signed_prefix, forged->payload, forged->mac)) << "seq changed";
}

TEST(RedisEnvelope, TheMacIsHmacSha256OfChannelNulHeaderPayload) {
  // Python: hmac.new(b"Jefe", b"framegate:room:R\0" + prefix + b"hi", sha256).hexdigest()
  const auto wire = encode_signed_redis_envelope(envelope_mac("Jefe"), "framegate:room:R", 1, 2, "hi");
  EXPECT_EQ(wire.substr(38, 64), "d0443ec765fe734f6f6de9c538f72ac20cddaaa2c59b17f9050ba983df957eeb");
}

TEST(RedisEnvelope, MalformedSignedHeadersAreNotEnvelopes) {
  const envelope_mac mac("k");
  const auto wire = encode_signed_redis_envelope(mac, "c", 1, 2, "p");
  EXPECT_FALSE(parse_redis_envelope(wire.substr(0, redis_signed_header_bytes - 1)));
  std::string bad = wire;
  bad[37] = '-';
  EXPECT_FALSE(parse_redis_envelope(bad));
  bad = wire;
  bad[50] = 'G';
  EXPECT_FALSE(parse_redis_envelope(bad)) << "the MAC is hex";
  bad = wire;
  bad[102] = ' ';
  EXPECT_FALSE(parse_redis_envelope(bad));
}

TEST(RedisEnvelope, AnEmptySecretIsRefused) { EXPECT_THROW(envelope_mac(""), std::invalid_argument); }

}  // namespace
