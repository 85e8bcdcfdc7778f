// Which client a --forwarded-for-from proxy's request stands for: the
// nearest hop outside the trusted networks, never one a client wrote left
// of it; the balancer itself without a header; the nearest known hop when
// a hop's address is not known.
#include "gateway/net/forwarded_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace fg::gateway {
namespace {

namespace ip = boost::asio::ip;
using result = forwarded_client::result;

const trusted_networks proxies = trusted_networks::parse("198.18.0.0/24, 2001:db8:ffff::/48");
const ip::address balancer = ip::make_address("198.18.0.1");

forwarded_client resolve(std::string_view header, http::forwarded_syntax syntax = http::forwarded_syntax::address_list,
                         const ip::address& peer = balancer) {
  http::forwarded_hops hops(syntax);
  if (!header.empty()) hops.add_line(header);
  return resolve_forwarded_client(hops, proxies, peer);
}

void expect(const forwarded_client& got, result what, std::string_view address) {
  EXPECT_EQ(got.what, what);
  EXPECT_EQ(got.address, ip::make_address(address));
}

TEST(forwarded_client, the_nearest_untrusted_hop_is_the_client) {
  expect(resolve("203.0.113.7"), result::client, "203.0.113.7");
  expect(resolve("203.0.113.7, 198.18.0.9"), result::client, "203.0.113.7");  // through a second proxy
  expect(resolve("2001:db8::7, 2001:db8:ffff::2"), result::client, "2001:db8::7");
  expect(resolve("[2001:db8::7]:4000"), result::client, "2001:db8::7");
  expect(resolve("for=203.0.113.7;proto=https, for=198.18.0.9", http::forwarded_syntax::rfc7239), result::client,
         "203.0.113.7");
}

TEST(forwarded_client, what_a_client_wrote_before_its_balancer_is_not_believed) {
  // The client sent "X-Forwarded-For: 192.0.2.66"; its balancer appended
  // the address it saw.
  expect(resolve("192.0.2.66, 203.0.113.7"), result::client, "203.0.113.7");
  // Even an address inside the trusted networks, written by the client.
  expect(resolve("198.18.0.5, 203.0.113.7"), result::client, "203.0.113.7");
  expect(resolve("garbage, unknown, 203.0.113.7"), result::client, "203.0.113.7");
}

TEST(forwarded_client, no_header_leaves_the_balancer_as_the_client) {
  expect(resolve(""), result::absent, "198.18.0.1");
  expect(resolve(" , "), result::absent, "198.18.0.1");  // lines of empty elements name nobody
}

TEST(forwarded_client, a_hop_not_known_stops_at_the_nearest_known_one) {
  expect(resolve("unknown"), result::unknown, "198.18.0.1");
  expect(resolve("203.0.113.7, unknown, 198.18.0.9"), result::unknown, "198.18.0.9");
  expect(resolve("for=_hidden", http::forwarded_syntax::rfc7239), result::unknown, "198.18.0.1");
}

TEST(forwarded_client, an_all_trusted_chain_names_its_farthest_hop) {
  expect(resolve("198.18.0.7, 198.18.0.9"), result::client, "198.18.0.7");
  // Unless hops were dropped for the ring: the farthest is then not known.
  std::string line;
  for (std::size_t i = 0; i <= http::forwarded_hops::capacity; ++i)
    line += (i ? ", 198.18.0." : "198.18.0.") + std::to_string(i + 10);
  expect(resolve(line), result::unknown, "198.18.0.11");
}

TEST(forwarded_client, an_ipv4_mapped_hop_is_matched_as_ipv4) {
  expect(resolve("203.0.113.7, ::ffff:198.18.0.9"), result::client, "203.0.113.7");
  expect(resolve("::ffff:203.0.113.7"), result::client, "::ffff:203.0.113.7");
}

}  // namespace
}  // namespace fg::gateway
