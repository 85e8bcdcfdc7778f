#include "gateway/limits/per_ip_limits.hpp"

#include <gtest/gtest.h>

namespace {

using fg::gateway::per_ip_limits;
using fg::gateway::per_ip_options;
using verdict = per_ip_limits::verdict;
namespace ip = boost::asio::ip;

per_ip_options capped(std::uint32_t max) {
  per_ip_options o;
  o.max_connections = max;
  return o;
}

TEST(per_ip_limits, caps_the_sockets_of_one_address_until_one_closes) {
  per_ip_limits limits(capped(2), 42);
  const auto a = ip::make_address("192.0.2.1");
  const auto first = limits.admit(a, 0);
  EXPECT_EQ(first.what, verdict::admitted);
  EXPECT_EQ(limits.admit(a, 0).what, verdict::admitted);
  EXPECT_EQ(limits.admit(a, 0).what, verdict::too_many_connections);
  EXPECT_EQ(limits.admit(ip::make_address("192.0.2.2"), 0).what, verdict::admitted);
  limits.release(first.slot);
  EXPECT_EQ(limits.admit(a, 0).what, verdict::admitted);
}

TEST(per_ip_limits, rate_limits_new_sockets_per_address_and_says_when_to_retry) {
  per_ip_options o;
  o.handshake_rate = 2;
  o.handshake_burst = 2;
  per_ip_limits limits(o, 42);
  const auto a = ip::make_address("192.0.2.1");
  EXPECT_EQ(limits.admit(a, 1000).what, verdict::admitted);
  EXPECT_EQ(limits.admit(a, 1000).what, verdict::admitted);
  const auto refused = limits.admit(a, 1000);
  EXPECT_EQ(refused.what, verdict::rate_limited);
  EXPECT_EQ(refused.retry_after_ms, 500u);
  EXPECT_EQ(limits.admit(ip::make_address("192.0.2.2"), 1000).what, verdict::admitted);
  EXPECT_EQ(limits.admit(a, 1500).what, verdict::admitted);
}

TEST(per_ip_limits, ipv6_addresses_are_keyed_by_their_64_bit_prefix) {
  per_ip_limits limits(capped(1), 42);
  EXPECT_EQ(limits.slot_of(ip::make_address("2001:db8:1:2::1")),
            limits.slot_of(ip::make_address("2001:db8:1:2::ffff")));
  EXPECT_EQ(limits.admit(ip::make_address("2001:db8:1:2::1"), 0).what, verdict::admitted);
  EXPECT_EQ(limits.admit(ip::make_address("2001:db8:1:2:aaaa::1"), 0).what, verdict::too_many_connections);
}

TEST(per_ip_limits, a_v4_mapped_address_is_its_v4_address) {
  per_ip_limits limits(capped(1), 42);
  EXPECT_EQ(limits.slot_of(ip::make_address("::ffff:192.0.2.7")), limits.slot_of(ip::make_address("192.0.2.7")));
}

// Memory is the table's, whatever the number of addresses: a million
// addresses pass through a table of 64 slots.
TEST(per_ip_limits, any_number_of_addresses_fits_the_fixed_table) {
  per_ip_options o = capped(1u << 20);
  o.slots = 64;
  per_ip_limits limits(o, 7);
  for (std::uint32_t i = 0; i < 1'000'000; ++i) {
    const auto a = limits.admit(ip::address_v4(i), 0);
    ASSERT_EQ(a.what, verdict::admitted);
    ASSERT_LT(a.slot, 64u);
  }
}

}  // namespace
