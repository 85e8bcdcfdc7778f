// --proxy-protocol-from's networks: which peers may name their client.
#include "gateway/net/trusted_networks.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace fg::gateway {
namespace {

namespace ip = boost::asio::ip;

bool trusts(const trusted_networks& t, const char* address) { return t.contains(ip::make_address(address)); }

TEST(trusted_networks, matches_ipv4_networks_and_single_addresses) {
  const auto t = trusted_networks::parse("198.18.0.0/15, 192.0.2.7");
  EXPECT_TRUE(trusts(t, "198.18.0.1"));
  EXPECT_TRUE(trusts(t, "198.19.255.255"));
  EXPECT_FALSE(trusts(t, "198.20.0.0"));
  EXPECT_TRUE(trusts(t, "192.0.2.7"));
  EXPECT_FALSE(trusts(t, "192.0.2.8"));
  EXPECT_FALSE(trusts(t, "2001:db8::1"));
}

TEST(trusted_networks, an_ipv4_peer_of_an_ipv6_socket_matches_as_ipv4) {
  const auto t = trusted_networks::parse("192.0.2.0/24");
  EXPECT_TRUE(trusts(t, "::ffff:192.0.2.9"));
  EXPECT_FALSE(trusts(t, "::ffff:198.51.100.9"));
}

TEST(trusted_networks, matches_ipv6_prefixes_at_any_length) {
  const auto t = trusted_networks::parse("2001:db8::/33,2001:db8:ffff::1");
  EXPECT_TRUE(trusts(t, "2001:db8:7fff::1"));   // the 33rd bit is 0
  EXPECT_FALSE(trusts(t, "2001:db8:8000::1"));  // the 33rd bit is 1
  EXPECT_TRUE(trusts(t, "2001:db8:ffff::1"));
  EXPECT_FALSE(trusts(t, "2001:db8:ffff::2"));
  EXPECT_FALSE(trusts(t, "192.0.2.1"));
  EXPECT_TRUE(trusts(trusted_networks::parse("::/0"), "2001:db8::5"));
  EXPECT_TRUE(trusts(trusted_networks::parse("0.0.0.0/0"), "203.0.113.1"));
}

TEST(trusted_networks, empty_items_are_skipped_and_an_empty_list_trusts_nobody) {
  EXPECT_TRUE(trusted_networks::parse("").empty());
  EXPECT_TRUE(trusted_networks::parse(" , ,").empty());
  EXPECT_FALSE(trusts(trusted_networks::parse(""), "127.0.0.1"));
  EXPECT_FALSE(trusted_networks::parse("127.0.0.1,").empty());
}

TEST(trusted_networks, refuses_what_is_not_a_network_naming_the_item) {
  for (const char* bad : {"balancer.local", "10.0.0.0/33", "2001:db8::/129", "10.0.0/8", "1.2.3.4/", "::g"}) {
    SCOPED_TRACE(bad);
    try {
      (void)trusted_networks::parse(bad);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(trusted_networks, refuses_host_bits_below_the_prefix_as_a_typo) {
  try {
    (void)trusted_networks::parse("10.0.0.1/8");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("10.0.0.0/8"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)trusted_networks::parse("2001:db8::1/32"), std::invalid_argument);
}

}  // namespace
}  // namespace fg::gateway
