// The header the Redis broker puts before every published payload.
#include "worker/broker/redis_envelope.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

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

// ------------------------------------------- versions 3 and 4: with the publisher's compression

// A segment as binary as a real one: NUL, newline, high bytes, and what
// looks like a header.
const std::string binary_segment("\xf2\x48\x00\n\xcd\xff\x00 fg1 \n\x07", 15);
const std::string segment_payload = "{\"room\":\"R\",\"data\":\"a\\nb\"}";

// The wire with its 16 segment-field characters (at `at`) replaced.
std::string with_fields(std::string wire, std::size_t at, std::string_view fields) {
  EXPECT_EQ(fields.size(), redis_segment_fields_bytes);
  wire.replace(at, fields.size(), fields);
  return wire;
}

std::string hex8(std::uint64_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(v));
  return buf;
}

TEST(RedisEnvelope, Version3CarriesTheSegmentBeforeThePayload) {
  const deflated_segment seg{binary_segment, 20};
  const auto wire = encode_redis_envelope(0xfedcba9876543210ull, 42, segment_payload, seg);
  ASSERT_EQ(wire.size(),
            redis_envelope_header_bytes + redis_segment_fields_bytes + binary_segment.size() + segment_payload.size());
  EXPECT_EQ(wire.substr(0, redis_envelope_header_bytes), "fg3 fedcba9876543210 000000000000002a\n");
  EXPECT_EQ(wire.substr(redis_envelope_header_bytes, redis_segment_fields_bytes), "0000000f00000014");
  EXPECT_EQ(wire.substr(redis_envelope_header_bytes + redis_segment_fields_bytes, binary_segment.size()),
            binary_segment);
  const auto env = parse_redis_envelope(wire);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->version, 3);
  EXPECT_FALSE(env->is_signed());
  EXPECT_EQ(env->origin, 0xfedcba9876543210ull);
  EXPECT_EQ(env->seq, 42u);
  EXPECT_EQ(env->payload, segment_payload);
  ASSERT_TRUE(env->segment.present());
  EXPECT_EQ(env->segment.bytes, binary_segment);
  EXPECT_EQ(env->segment.covers, 20u);
  EXPECT_TRUE(env->signed_prefix.empty());
  EXPECT_TRUE(env->signed_body.empty());
  EXPECT_TRUE(env->mac.empty());
}

TEST(RedisEnvelope, Version3BoundariesOfTheSegmentFields) {
  // covers may be 0 or the whole payload; the segment may end the body
  // (an empty payload, covering nothing).
  for (const std::size_t covers : {std::size_t{0}, std::size_t{1}, segment_payload.size()}) {
    const std::string wire = encode_redis_envelope(1, 2, segment_payload, {binary_segment, covers});
    const auto env = parse_redis_envelope(wire);  // views into wire
    ASSERT_TRUE(env) << covers;
    EXPECT_EQ(env->version, 3);
    EXPECT_EQ(env->segment.covers, covers);
    EXPECT_EQ(env->segment.bytes, binary_segment);
    EXPECT_EQ(env->payload, segment_payload);
  }
  const std::string empty_wire = encode_redis_envelope(1, 2, "", {binary_segment, 0});
  const auto empty = parse_redis_envelope(empty_wire);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->version, 3);
  EXPECT_EQ(empty->segment.bytes, binary_segment);
  EXPECT_TRUE(empty->payload.empty());
  // One byte of segment.
  const std::string one_wire = encode_redis_envelope(1, 2, "p", {std::string_view("\0", 1), 1});
  const auto one = parse_redis_envelope(one_wire);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->segment.bytes, std::string_view("\0", 1));
  EXPECT_EQ(one->payload, "p");
}

TEST(RedisEnvelope, Version4IsSignedOverTheSegmentFieldsSegmentAndPayload) {
  const envelope_mac mac("cluster secret");
  const std::string channel = "framegate:room:R";
  const deflated_segment seg{binary_segment, 20};
  const auto wire = encode_signed_redis_envelope(mac, channel, 0xab, 7, segment_payload, seg);
  ASSERT_EQ(wire.size(),
            redis_signed_header_bytes + redis_segment_fields_bytes + binary_segment.size() + segment_payload.size());
  EXPECT_EQ(wire.substr(0, 38), "fg4 00000000000000ab 0000000000000007 ");
  EXPECT_EQ(wire[102], '\n');
  EXPECT_EQ(wire.substr(redis_signed_header_bytes, redis_segment_fields_bytes), "0000000f00000014");
  const auto env = parse_redis_envelope(wire);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->version, 4);
  EXPECT_TRUE(env->is_signed());
  EXPECT_EQ(env->origin, 0xabu);
  EXPECT_EQ(env->seq, 7u);
  EXPECT_EQ(env->payload, segment_payload);
  EXPECT_EQ(env->segment.bytes, binary_segment);
  EXPECT_EQ(env->segment.covers, 20u);
  EXPECT_EQ(env->signed_prefix, wire.substr(0, redis_signed_prefix_bytes));
  EXPECT_EQ(env->signed_body, "0000000f00000014" + binary_segment + segment_payload);
  EXPECT_EQ(env->mac, wire.substr(38, 64));
  // As inbound_check verifies it.
  EXPECT_TRUE(mac.verify(channel, env->signed_prefix, env->signed_body, env->mac));
  EXPECT_FALSE(mac.verify("framegate:room:S", env->signed_prefix, env->signed_body, env->mac)) << "another room";
  EXPECT_FALSE(mac.verify(channel, env->signed_prefix, env->payload, env->mac)) << "the MAC covers the segment";
  EXPECT_FALSE(envelope_mac("other").verify(channel, env->signed_prefix, env->signed_body, env->mac));
  // Recomputed independently of the encoder's split.
  const auto expected = mac.compute(channel, wire.substr(0, 37), wire.substr(redis_signed_header_bytes));
  EXPECT_EQ(env->mac, std::string_view(expected.data(), expected.size()));
}

TEST(RedisEnvelope, Version4MacFailsWhenTheSegmentOrItsFieldsChange) {
  const envelope_mac mac("cluster secret");
  const std::string channel = "framegate:room:R";
  const auto wire = encode_signed_redis_envelope(mac, channel, 0xab, 7, segment_payload, {binary_segment, 20});
  const std::size_t fields = redis_signed_header_bytes;
  const std::size_t segment = fields + redis_segment_fields_bytes;
  const std::size_t payload = segment + binary_segment.size();
  for (const std::size_t at : {segment, segment + 2, segment + 3, payload - 1, payload, wire.size() - 1}) {
    std::string forged = wire;
    forged[at] = static_cast<char>(forged[at] ^ 0x01);
    const auto env = parse_redis_envelope(forged);
    ASSERT_TRUE(env) << "byte " << at << ": the shape is still valid";
    EXPECT_FALSE(mac.verify(channel, env->signed_prefix, env->signed_body, env->mac)) << "byte " << at;
  }
  // covers changed (still within the payload)
  const std::string covers_wire = with_fields(wire, fields, "0000000f00000015");
  const auto covers_changed = parse_redis_envelope(covers_wire);
  ASSERT_TRUE(covers_changed);
  EXPECT_EQ(covers_changed->segment.covers, 21u);
  EXPECT_FALSE(mac.verify(channel, covers_changed->signed_prefix, covers_changed->signed_body, covers_changed->mac));
  // The segment made one byte longer, the payload one shorter.
  const std::string moved_wire = with_fields(wire, fields, "0000001000000014");
  const auto moved = parse_redis_envelope(moved_wire);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->segment.bytes.size(), binary_segment.size() + 1);
  EXPECT_EQ(moved->payload, segment_payload.substr(1));
  EXPECT_FALSE(mac.verify(channel, moved->signed_prefix, moved->signed_body, moved->mac));
}

TEST(RedisEnvelope, MalformedSegmentFieldsAreNotEnvelopes) {
  const envelope_mac mac("k");
  const deflated_segment seg{binary_segment, 20};
  const std::string v3 = encode_redis_envelope(1, 2, segment_payload, seg);
  const std::string v4 = encode_signed_redis_envelope(mac, "c", 1, 2, segment_payload, seg);
  ASSERT_TRUE(parse_redis_envelope(v3));
  ASSERT_TRUE(parse_redis_envelope(v4));
  const std::size_t body = segment_payload.size() + binary_segment.size();  // after the fields
  const std::string covers = hex8(20);
  for (const auto& [wire, at] :
       {std::pair{v3, redis_envelope_header_bytes}, std::pair{v4, redis_signed_header_bytes}}) {
    const int v = wire[2] - '0';
    // The valid extremes first, so the failures below are about the value.
    EXPECT_TRUE(parse_redis_envelope(with_fields(wire, at, hex8(body) + hex8(0)))) << v << ": segment to the end";
    EXPECT_TRUE(parse_redis_envelope(with_fields(wire, at, hex8(binary_segment.size()) + hex8(segment_payload.size()))))
        << v << ": covers the whole payload";

    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, hex8(0) + covers))) << v << ": segment size 0";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, hex8(body + 1) + hex8(0)))) << v << ": beyond the body";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, "ffffffff" + hex8(0)))) << v << ": far beyond the body";
    EXPECT_FALSE(
        parse_redis_envelope(with_fields(wire, at, hex8(binary_segment.size()) + hex8(segment_payload.size() + 1))))
        << v << ": covers more than the payload";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, hex8(body) + hex8(1))))
        << v << ": covers a byte of an empty payload";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, "0000000g" + covers))) << v << ": size not hex";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, "0000000F" + covers))) << v << ": upper-case hex";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, "       f" + covers))) << v << ": size padded";
    EXPECT_FALSE(parse_redis_envelope(with_fields(wire, at, hex8(binary_segment.size()) + "0000001x")))
        << v << ": covers not hex";
    // Fields cut short: a body shorter than the 16 characters.
    EXPECT_FALSE(parse_redis_envelope(wire.substr(0, at + redis_segment_fields_bytes - 1))) << v;
    EXPECT_FALSE(parse_redis_envelope(wire.substr(0, at))) << v << ": no fields at all";
  }
  // A version 1 or 2 envelope relabelled 3 or 4: its payload is no segment.
  std::string relabelled = encode_redis_envelope(1, 2, "{\"x\":1}");
  relabelled[2] = '3';
  EXPECT_FALSE(parse_redis_envelope(relabelled));
  relabelled = encode_signed_redis_envelope(mac, "c", 1, 2, "{\"x\":1}");
  relabelled[2] = '4';
  EXPECT_FALSE(parse_redis_envelope(relabelled));
}

TEST(RedisEnvelope, WithoutASegmentVersions1And2AreUnchanged) {
  const envelope_mac mac("Jefe");
  // An empty segment is none, whatever its covers says.
  for (const deflated_segment none : {deflated_segment{}, deflated_segment{"", 5}}) {
    const auto v1 = encode_redis_envelope(0xfedcba9876543210ull, 42, segment_payload, none);
    EXPECT_EQ(v1, encode_redis_envelope(0xfedcba9876543210ull, 42, segment_payload));
    EXPECT_EQ(v1, "fg1 fedcba9876543210 000000000000002a\n" + segment_payload);
    const auto v2 = encode_signed_redis_envelope(mac, "framegate:room:R", 1, 2, "hi", none);
    EXPECT_EQ(v2,
              "fg2 0000000000000001 0000000000000002 "
              "d0443ec765fe734f6f6de9c538f72ac20cddaaa2c59b17f9050ba983df957eeb\nhi");
    const auto env1 = parse_redis_envelope(v1);
    ASSERT_TRUE(env1);
    EXPECT_EQ(env1->version, 1);
    EXPECT_FALSE(env1->segment.present());
    EXPECT_EQ(env1->segment.covers, 0u);
    const auto env2 = parse_redis_envelope(v2);
    ASSERT_TRUE(env2);
    EXPECT_EQ(env2->version, 2);
    EXPECT_FALSE(env2->segment.present());
    EXPECT_EQ(env2->signed_body, "hi");
    EXPECT_TRUE(mac.verify("framegate:room:R", env2->signed_prefix, env2->signed_body, env2->mac));
  }
  // A version 1 payload that happens to look like segment fields is still
  // the payload.
  const std::string looks_like_wire = encode_redis_envelope(1, 2, "0000000100000000xy");
  const auto looks_like = parse_redis_envelope(looks_like_wire);
  ASSERT_TRUE(looks_like);
  EXPECT_EQ(looks_like->version, 1);
  EXPECT_EQ(looks_like->payload, "0000000100000000xy");
  EXPECT_FALSE(looks_like->segment.present());
}

TEST(RedisEnvelope, AnEmptySecretIsRefused) { EXPECT_THROW(envelope_mac(""), std::invalid_argument); }

}  // namespace
