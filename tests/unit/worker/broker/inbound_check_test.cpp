// What may be delivered of a Redis channel message: the header, the MAC,
// the size and UTF-8, each rejection named.
#include "worker/broker/inbound_check.hpp"

#include <gtest/gtest.h>

#include <string>

#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/redis_envelope.hpp"

namespace {

using namespace fg::worker;

inbound_policy limit(std::size_t max, foreign_policy f = foreign_policy::drop) { return {max, f, nullptr, {}}; }

TEST(InboundCheck, AFramegateMessageWithinTheLimitIsDelivered) {
  const std::string m = encode_redis_envelope(1, 2, "{\"a\":\"\xc3\xa9\"}");
  const auto v = check_inbound(m, limit(100));
  EXPECT_FALSE(v.reject);
  ASSERT_TRUE(v.envelope);
  EXPECT_EQ(v.envelope->seq, 2u);
  EXPECT_EQ(v.payload, "{\"a\":\"\xc3\xa9\"}");
}

TEST(InboundCheck, ThePayloadLimitIsInclusive) {
  EXPECT_FALSE(check_inbound(encode_redis_envelope(1, 1, std::string(10, 'x')), limit(10)).reject);
  EXPECT_EQ(check_inbound(encode_redis_envelope(1, 1, std::string(11, 'x')), limit(10)).reject,
            inbound_reject::too_big);
  EXPECT_FALSE(check_inbound(encode_redis_envelope(1, 1, std::string(1000, 'x')), limit(0)).reject) << "0: no limit";
}

TEST(InboundCheck, TextMustBeUtf8) {
  for (const std::string bad : {"\xff", "caf\xc3", "\xed\xa0\x80", "\xc0\xaf"})
    EXPECT_EQ(check_inbound(encode_redis_envelope(1, 1, bad), limit(100)).reject, inbound_reject::invalid_utf8);
}

TEST(InboundCheck, ForeignMessagesAreDroppedUnlessAskedForAndThenStillChecked) {
  EXPECT_EQ(check_inbound("{}", limit(100)).reject, inbound_reject::foreign);
  const auto v = check_inbound("{}", limit(100, foreign_policy::deliver));
  EXPECT_FALSE(v.reject);
  EXPECT_FALSE(v.envelope);
  EXPECT_EQ(v.payload, "{}");
  EXPECT_EQ(check_inbound(std::string(101, 'x'), limit(100, foreign_policy::deliver)).reject, inbound_reject::too_big);
  EXPECT_EQ(check_inbound("\xfe", limit(100, foreign_policy::deliver)).reject, inbound_reject::invalid_utf8);
}

TEST(InboundCheck, WithASecretOnlyAValidMacPasses) {
  const envelope_mac mac("k");
  inbound_policy p = limit(100, foreign_policy::deliver);
  p.mac = &mac;
  p.channel = "framegate:room:R";
  EXPECT_FALSE(check_inbound(encode_signed_redis_envelope(mac, "framegate:room:R", 1, 1, "{}"), p).reject);
  EXPECT_EQ(check_inbound(encode_signed_redis_envelope(mac, "framegate:room:S", 1, 1, "{}"), p).reject,
            inbound_reject::bad_mac);
  EXPECT_EQ(check_inbound(encode_signed_redis_envelope(envelope_mac("j"), "framegate:room:R", 1, 1, "{}"), p).reject,
            inbound_reject::bad_mac);
  EXPECT_EQ(check_inbound(encode_redis_envelope(1, 1, "{}"), p).reject, inbound_reject::bad_mac) << "version 1";
  EXPECT_EQ(check_inbound("{}", p).reject, inbound_reject::bad_mac) << "foreign, even with deliver";
  // The MAC comes first: junk without it is not even looked at.
  EXPECT_EQ(check_inbound(std::string(1000, '\xff'), p).reject, inbound_reject::bad_mac);
}

TEST(InboundCheck, WithoutASecretSignedEnvelopesAreRead) {
  // The verdict's views point into the message: it must outlive them.
  const std::string message = encode_signed_redis_envelope(envelope_mac("k"), "c", 4, 5, "{}");
  const auto v = check_inbound(message, limit(100));
  EXPECT_FALSE(v.reject);
  ASSERT_TRUE(v.envelope);
  EXPECT_EQ(v.envelope->version, 2);
  EXPECT_EQ(v.payload, "{}");
}

TEST(InboundCheck, TheDeliveryLimitIsTheSmallerOfTheWorkersAndTheGateways) {
  EXPECT_EQ(delivery_limit(1 << 20, 0), (1u << 20) - send_envelope_overhead);
  EXPECT_EQ(delivery_limit(1 << 20, 1000), 1000u);
  EXPECT_EQ(delivery_limit(1 << 20, 1u << 30), (1u << 20) - send_envelope_overhead);
}

TEST(InboundCheck, EveryReasonHasALabel) {
  for (std::size_t i = 0; i < inbound_reject_count; ++i)
    EXPECT_STRNE(inbound_reject_name(static_cast<inbound_reject>(i)), "unknown");
}

}  // namespace
