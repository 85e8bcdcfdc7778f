// The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and
// 2) as a balancer puts it before the client's bytes: the source it names,
// the header's exact length (never a byte of the request after it), the
// named error of each malformed header, and the same answer however the
// bytes arrive (the session parses everything read so far, each time).
#include "gateway/http/proxy_header.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/support/param_name.hpp"

namespace fg::http {

// Readable failures: the enumerators by name rather than as raw bytes.
[[maybe_unused]] static std::string_view error_name(proxy_error e) {
  switch (e) {
    case proxy_error::none: return "none";
    case proxy_error::not_proxy: return "not_proxy";
    case proxy_error::v1_too_long: return "v1_too_long";
    case proxy_error::v1_malformed: return "v1_malformed";
    case proxy_error::v1_bad_address: return "v1_bad_address";
    case proxy_error::v1_bad_port: return "v1_bad_port";
    case proxy_error::v2_bad_version: return "v2_bad_version";
    case proxy_error::v2_bad_command: return "v2_bad_command";
    case proxy_error::v2_bad_family: return "v2_bad_family";
    case proxy_error::v2_too_short: return "v2_too_short";
    case proxy_error::v2_too_long: return "v2_too_long";
  }
  return "?";
}
[[maybe_unused]] static void PrintTo(proxy_error e, std::ostream* os) { *os << error_name(e); }
[[maybe_unused]] static void PrintTo(proxy_parse::status s, std::ostream* os) {
  *os << (s == proxy_parse::status::need_more ? "need_more" : s == proxy_parse::status::done ? "done" : "failed");
}
[[maybe_unused]] static void PrintTo(proxy_source::family f, std::ostream* os) {
  *os << (f == proxy_source::family::none ? "none" : f == proxy_source::family::ipv4 ? "ipv4" : "ipv6");
}

namespace {

FG_PRINT_CASES_BY_NAME()

using status = proxy_parse::status;
using family = proxy_source::family;

constexpr std::string_view http_request = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
constexpr std::string_view v2_signature{"\r\n\r\n\0\r\nQUIT\n", 12};

constexpr std::array all_errors{proxy_error::none,           proxy_error::not_proxy,      proxy_error::v1_too_long,
                                proxy_error::v1_malformed,   proxy_error::v1_bad_address, proxy_error::v1_bad_port,
                                proxy_error::v2_bad_version, proxy_error::v2_bad_command, proxy_error::v2_bad_family,
                                proxy_error::v2_too_short,   proxy_error::v2_too_long};

proxy_parse parse(std::string_view s) {
  return parse_proxy_header({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

std::string raw(std::initializer_list<int> bytes) {
  std::string out;
  for (const int b : bytes) out += static_cast<char>(b);
  return out;
}

// A version 2 header: signature, ver_cmd, family, `length` (the body's own
// size unless given: a lying length) and the body (addresses, TLVs).
std::string v2(int ver_cmd, int fam, std::string_view body, std::optional<std::size_t> length = std::nullopt) {
  const std::size_t n = length.value_or(body.size());
  std::string out(v2_signature);
  out += raw({ver_cmd, fam, static_cast<int>(n >> 8), static_cast<int>(n & 0xff)});
  out += body;
  return out;
}

std::string port_bytes(std::uint16_t port) { return raw({port >> 8, port & 0xff}); }

// src 192.0.2.1:56324 -> dst 198.51.100.2:443
const std::string ipv4_block = raw({192, 0, 2, 1, 198, 51, 100, 2}) + port_bytes(56324) + port_bytes(443);
// src 2001:db8::1:56324 -> dst 2001:db8::2:443
const std::string ipv6_block = raw({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) +
                               raw({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}) + port_bytes(56324) +
                               port_bytes(443);
const std::string unix_block = [] {
  std::string paths(216, '\0');
  constexpr std::string_view client = "/run/client.sock", gateway = "/run/gate.sock";
  paths.replace(0, client.size(), client);
  paths.replace(108, gateway.size(), gateway);
  return paths;
}();

proxy_source ipv4(std::array<std::uint8_t, 4> address, std::uint16_t port) {
  proxy_source s;
  s.kind = family::ipv4;
  for (std::size_t i = 0; i < 4; ++i) s.bytes[i] = address[i];
  s.port = port;
  return s;
}
proxy_source ipv6(std::array<std::uint8_t, 16> address, std::uint16_t port) {
  proxy_source s;
  s.kind = family::ipv6;
  s.bytes = address;
  s.port = port;
  return s;
}
const proxy_source no_source{};
const proxy_source v4_client = ipv4({192, 0, 2, 1}, 56324);
const proxy_source v6_client = ipv6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 56324);

// All of the source is compared: for ipv4 the bytes past the first 4 and for
// `none` all of them and the port stay zero.
void expect_done(const proxy_parse& r, std::size_t length, const proxy_source& source) {
  EXPECT_EQ(r.what, status::done);
  EXPECT_EQ(r.error, proxy_error::none);
  EXPECT_EQ(r.length, length);
  EXPECT_EQ(r.source.kind, source.kind);
  EXPECT_EQ(r.source.bytes, source.bytes);
  EXPECT_EQ(r.source.port, source.port);
}

// `header` followed by an HTTP request: done at the header's end.
void expect_header(const std::string& header, const proxy_source& source) {
  SCOPED_TRACE(header);
  expect_done(parse(header + std::string(http_request)), header.size(), source);
}

void expect_failed(const proxy_parse& r, proxy_error e) {
  EXPECT_EQ(r.what, status::failed);
  EXPECT_EQ(r.error, e);
}

// ---------------------------------------------------------------- version 1

TEST(ProxyHeaderV1, tcp4_names_the_source_and_stops_at_the_crlf) {
  const std::string header = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n";
  expect_done(parse(header), header.size(), v4_client);
  // The request after it is the client's: not consumed.
  expect_done(parse(header + std::string(http_request)), header.size(), v4_client);
}

TEST(ProxyHeaderV1, tcp6_names_the_source_and_stops_at_the_crlf) {
  const std::string header = "PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n";
  expect_done(parse(header), header.size(), v6_client);
  expect_done(parse(header + std::string(http_request)), header.size(), v6_client);
}

TEST(ProxyHeaderV1, address_and_port_extremes) {
  expect_header("PROXY TCP4 0.0.0.0 255.255.255.255 0 65535\r\n", ipv4({0, 0, 0, 0}, 0));
  expect_header("PROXY TCP4 255.255.255.255 0.0.0.0 65535 0\r\n", ipv4({255, 255, 255, 255}, 65535));
  expect_header("PROXY TCP4 10.20.30.40 10.0.0.1 1 2\r\n", ipv4({10, 20, 30, 40}, 1));
  expect_header("PROXY TCP6 ::1 :: 80 443\r\n", ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 80));
  expect_header("PROXY TCP6 :: ::1 8080 443\r\n", ipv6({}, 8080));
  expect_header("PROXY TCP6 fe80::a:B:c ::1 80 443\r\n",
                ipv6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 0x0b, 0, 0x0c}, 80));
  expect_header("PROXY TCP6 1:2:3:4:5:6:7:: ::1 80 443\r\n",
                ipv6({0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0}, 80));
  expect_header("PROXY TCP6 2001:0DB8:0000:0000:0000:0000:0000:0001 ::2 1234 443\r\n",
                ipv6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 1234));
  // The spec's longest TCP6 line: 104 bytes.
  const std::string ff = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
  const std::string longest = "PROXY TCP6 " + ff + " " + ff + " 65535 65535\r\n";
  ASSERT_EQ(longest.size(), 104u);
  proxy_source all_ones = ipv6({}, 65535);
  all_ones.bytes.fill(0xff);
  expect_header(longest, all_ones);
}

TEST(ProxyHeaderV1, unknown_has_no_source_with_or_without_the_rest) {
  expect_done(parse("PROXY UNKNOWN\r\n"), 15, no_source);
  expect_done(parse("PROXY UNKNOWN\r\n" + std::string(http_request)), 15, no_source);
  const std::string with_rest = "PROXY UNKNOWN 192.0.2.1 198.51.100.2 56324 443\r\n";
  expect_done(parse(with_rest), with_rest.size(), no_source);
  // Anything before the CRLF is ignored, addresses or not.
  const std::string anything = "PROXY UNKNOWN whatever the balancer had to say\r\n";
  expect_done(parse(anything + std::string(http_request)), anything.size(), no_source);
}

TEST(ProxyHeaderV1, at_most_107_bytes_crlf_included) {
  const std::string ff = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
  const std::string worst = "PROXY UNKNOWN " + ff + " " + ff + " 65535 65535\r\n";  // the spec's worst case
  ASSERT_EQ(worst.size(), max_proxy_v1_bytes);
  expect_done(parse(worst + std::string(http_request)), 107, no_source);

  const std::string one_more = "PROXY UNKNOWN " + ff + " " + ff + " 65535 655355\r\n";
  ASSERT_EQ(one_more.size(), 108u);
  expect_failed(parse(one_more), proxy_error::v1_too_long);

  // No CRLF in the first 107 bytes: refused then, not waited for.
  const std::string no_crlf = "PROXY UNKNOWN " + std::string(107 - 14, 'x');
  ASSERT_EQ(no_crlf.size(), 107u);
  EXPECT_EQ(parse(no_crlf.substr(0, 106)).what, status::need_more);
  expect_failed(parse(no_crlf), proxy_error::v1_too_long);
  expect_failed(parse(no_crlf + std::string(200, 'x')), proxy_error::v1_too_long);
}

struct error_case {
  std::string name;
  std::string input;
  proxy_error error;
};

std::vector<error_case> v1_error_cases() {
  using enum proxy_error;
  using namespace std::string_literals;
  return {
      // Not "PROXY" at all: the signature is case-sensitive.
      {"lowercase_proxy", "proxy TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", not_proxy},
      // The line's shape.
      {"missing_space_after_protocol", "PROXY TCP4192.0.2.1 198.51.100.2 56324 443\r\n", v1_malformed},
      {"double_space_before_protocol", "PROXY  TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", v1_malformed},
      {"double_space_between_addresses", "PROXY TCP4 192.0.2.1  198.51.100.2 56324 443\r\n", v1_malformed},
      {"double_space_between_ports", "PROXY TCP4 192.0.2.1 198.51.100.2 56324  443\r\n", v1_malformed},
      {"missing_destination_port", "PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n", v1_malformed},
      {"extra_field", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 80\r\n", v1_malformed},
      {"trailing_space", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 \r\n", v1_malformed},
      {"tab_separator", "PROXY TCP4 192.0.2.1\t198.51.100.2 56324 443\r\n", v1_malformed},
      {"lowercase_protocol", "PROXY tcp4 192.0.2.1 198.51.100.2 56324 443\r\n", v1_malformed},
      {"unknown_protocol", "PROXY TCP5 192.0.2.1 198.51.100.2 56324 443\r\n", v1_malformed},
      {"udp_protocol", "PROXY UDP4 192.0.2.1 198.51.100.2 56324 443\r\n", v1_malformed},
      {"protocol_only", "PROXY TCP4\r\n", v1_malformed},
      {"nothing_after_proxy", "PROXY \r\n", v1_malformed},
      {"lf_without_cr", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n", v1_malformed},
      // Addresses not of the announced family, or not canonical.
      {"tcp4_with_ipv6_source", "PROXY TCP4 2001:db8::1 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"tcp4_with_ipv6_destination", "PROXY TCP4 192.0.2.1 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"tcp6_with_ipv4_source", "PROXY TCP6 192.0.2.1 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"ipv4_octet_above_255", "PROXY TCP4 192.0.2.256 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv4_three_octets", "PROXY TCP4 192.0.2 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv4_five_octets", "PROXY TCP4 192.0.2.1.5 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv4_leading_zero", "PROXY TCP4 192.0.2.01 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv4_empty_octet", "PROXY TCP4 192..2.1 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv4_hostname", "PROXY TCP4 localhost 198.51.100.2 56324 443\r\n", v1_bad_address},
      {"ipv6_two_double_colons", "PROXY TCP6 2001::db8::1 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"ipv6_nine_groups", "PROXY TCP6 1:2:3:4:5:6:7:8:9 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"ipv6_seven_groups", "PROXY TCP6 1:2:3:4:5:6:7 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"ipv6_five_digit_group", "PROXY TCP6 2001:0db80::1 2001:db8::2 56324 443\r\n", v1_bad_address},
      {"nul_after_ipv4_address", "PROXY TCP4 192.0.2.1\0 198.51.100.2 56324 443\r\n"s, v1_bad_address},
      {"nul_after_ipv6_address", "PROXY TCP6 2001:db8::1\0x 2001:db8::2 56324 443\r\n"s, v1_bad_address},
      {"ipv6_not_hex", "PROXY TCP6 2001:db8::g 2001:db8::2 56324 443\r\n", v1_bad_address},
      // Ports: decimal 0-65535 without leading zeros.
      {"port_65536", "PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n", v1_bad_port},
      {"destination_port_65536", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 65536\r\n", v1_bad_port},
      {"port_leading_zero", "PROXY TCP4 192.0.2.1 198.51.100.2 080 443\r\n", v1_bad_port},
      {"port_negative", "PROXY TCP4 192.0.2.1 198.51.100.2 -1 443\r\n", v1_bad_port},
      {"port_plus_sign", "PROXY TCP4 192.0.2.1 198.51.100.2 +80 443\r\n", v1_bad_port},
      {"port_hex", "PROXY TCP4 192.0.2.1 198.51.100.2 0x50 443\r\n", v1_bad_port},
      {"port_overflowing_64_bits", "PROXY TCP4 192.0.2.1 198.51.100.2 18446744073709551696 443\r\n", v1_bad_port},
      // No CRLF within 107 bytes.
      {"unknown_without_crlf", "PROXY UNKNOWN " + std::string(200, '-'), v1_too_long},
      {"crlf_at_108", "PROXY UNKNOWN " + std::string(92, '-') + "\r\n", v1_too_long},
  };
}

std::vector<error_case> v2_error_cases() {
  using enum proxy_error;
  std::string tlv_body = ipv4_block + raw({0x04, 0, 3, 1, 2, 3});
  return {
      {"version_1", v2(0x11, 0x11, ipv4_block), v2_bad_version},
      {"version_3", v2(0x31, 0x11, ipv4_block), v2_bad_version},
      {"version_0", v2(0x01, 0x11, ipv4_block), v2_bad_version},
      {"command_2", v2(0x22, 0x11, ipv4_block), v2_bad_command},
      {"command_15", v2(0x2f, 0x11, ipv4_block), v2_bad_command},
      {"family_4", v2(0x21, 0x41, ipv4_block), v2_bad_family},
      {"family_15", v2(0x21, 0xf1, ipv4_block), v2_bad_family},
      {"transport_3", v2(0x21, 0x13, ipv4_block), v2_bad_family},
      {"transport_15", v2(0x21, 0x2f, ipv6_block), v2_bad_family},
      // An address family with the unspecified transport, or the reverse: not among the defined pairs.
      {"inet_transport_unspec", v2(0x21, 0x10, ipv4_block), v2_bad_family},
      {"inet6_transport_unspec", v2(0x21, 0x20, ipv6_block), v2_bad_family},
      {"family_unspec_stream", v2(0x21, 0x01, ipv4_block), v2_bad_family},
      {"ipv4_one_byte_short", v2(0x21, 0x11, ipv4_block.substr(0, 11)), v2_too_short},
      {"ipv4_empty", v2(0x21, 0x11, ""), v2_too_short},
      {"ipv6_with_ipv4_length", v2(0x21, 0x21, ipv4_block), v2_too_short},
      {"ipv6_one_byte_short", v2(0x21, 0x21, ipv6_block.substr(0, 35)), v2_too_short},
      {"unix_one_byte_short", v2(0x21, 0x31, unix_block.substr(0, 215)), v2_too_short},
      {"one_byte_above_the_limit", v2(0x21, 0x11, tlv_body, max_proxy_header_bytes - 16 + 1), v2_too_long},
      {"largest_length", v2(0x21, 0x11, tlv_body, 0xffff), v2_too_long},
      {"local_above_the_limit", v2(0x20, 0x00, "", 0x8000), v2_too_long},
  };
}

class ProxyHeaderErrors : public ::testing::TestWithParam<error_case> {};

TEST_P(ProxyHeaderErrors, named_and_never_done) {
  const error_case& c = GetParam();
  expect_failed(parse(c.input), c.error);
  // No prefix is a header: need_more until the failure, which then stays.
  bool failed = false;
  for (std::size_t k = 0; k <= c.input.size(); ++k) {
    const proxy_parse r = parse(std::string_view(c.input).substr(0, k));
    ASSERT_NE(r.what, status::done) << "prefix of " << k;
    if (failed) {
      ASSERT_EQ(r.what, status::failed) << "prefix of " << k;
    }
    if (r.what == status::failed) {
      failed = true;
      ASSERT_EQ(r.error, c.error) << "prefix of " << k;
    }
  }
  // The bytes after the broken header change nothing.
  expect_failed(parse(c.input + std::string(http_request)), c.error);
}

INSTANTIATE_TEST_SUITE_P(ProxyHeaderV1, ProxyHeaderErrors, ::testing::ValuesIn(v1_error_cases()),
                         fg::test::param_name{});
INSTANTIATE_TEST_SUITE_P(ProxyHeaderV2, ProxyHeaderErrors, ::testing::ValuesIn(v2_error_cases()),
                         fg::test::param_name{});

TEST(ProxyHeaderV1, a_lone_cr_never_ends_the_line) {
  // "The receiver must not tolerate a single CR or LF character to end the
  // line": waiting for a CRLF is allowed, but never accepting.
  const std::string lone_cr = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r";
  for (const std::string& input : {lone_cr + "X", lone_cr + std::string(http_request)}) {
    SCOPED_TRACE(input);
    for (std::size_t k = 0; k <= input.size(); ++k) ASSERT_NE(parse(input.substr(0, k)).what, status::done) << k;
  }
  EXPECT_EQ(parse(lone_cr + std::string(http_request)).what, status::failed);
  EXPECT_EQ(parse(lone_cr + std::string(200, 'X')).what, status::failed);
}

// ---------------------------------------------------------------- version 2

TEST(ProxyHeaderV2, proxy_over_tcp4) {
  const std::string header = v2(0x21, 0x11, ipv4_block);
  ASSERT_EQ(header.size(), 28u);
  expect_done(parse(header), 28, v4_client);
  expect_done(parse(header + std::string(http_request)), 28, v4_client);
}

TEST(ProxyHeaderV2, proxy_over_tcp6) {
  const std::string header = v2(0x21, 0x21, ipv6_block);
  ASSERT_EQ(header.size(), 52u);
  expect_done(parse(header), 52, v6_client);
  expect_done(parse(header + std::string(http_request)), 52, v6_client);
}

TEST(ProxyHeaderV2, local_has_no_source_whatever_its_addresses) {
  expect_done(parse(v2(0x20, 0x00, "") + std::string(http_request)), 16, no_source);
  // A health check may still carry the balancer's addresses: skipped.
  expect_done(parse(v2(0x20, 0x11, ipv4_block) + std::string(http_request)), 16 + 12, no_source);
  expect_done(parse(v2(0x20, 0x21, ipv6_block)), 16 + 36, no_source);
  expect_done(parse(v2(0x20, 0x00, "abcde")), 16 + 5, no_source);
}

TEST(ProxyHeaderV2, local_ignores_the_family_and_its_address_length) {
  // LOCAL: "the receiver must accept this connection as valid and must use
  // the real connection endpoints and discard the protocol block including
  // the family which is ignored" -- a health check with the connection's
  // family and no addresses is still a health check.
  expect_done(parse(v2(0x20, 0x11, "") + std::string(http_request)), 16, no_source);
  expect_done(parse(v2(0x20, 0x21, ipv4_block)), 16 + 12, no_source);
  expect_done(parse(v2(0x20, 0x31, "")), 16, no_source);
}

TEST(ProxyHeaderV2, unspec_family_has_no_source) {
  expect_done(parse(v2(0x21, 0x00, "") + std::string(http_request)), 16, no_source);
  // "Receivers MUST always consider this field to skip the appropriate number of bytes".
  expect_done(parse(v2(0x21, 0x00, "opaque")), 16 + 6, no_source);
}

TEST(ProxyHeaderV2, unix_family_has_no_source) {
  expect_done(parse(v2(0x21, 0x31, unix_block) + std::string(http_request)), 16 + 216, no_source);
  expect_done(parse(v2(0x21, 0x32, unix_block)), 16 + 216, no_source);
}

TEST(ProxyHeaderV2, datagram_transports_are_accepted) {
  // 0x12 and 0x22 are in the specification: a receiver either uses them or
  // falls back to UNSPEC (the real endpoints), never refuses.
  struct transport {
    int fam;
    std::string body;
    proxy_source source;
  };
  for (const transport& t : {transport{0x12, ipv4_block, v4_client}, transport{0x22, ipv6_block, v6_client}}) {
    SCOPED_TRACE(t.fam);
    const proxy_parse r = parse(v2(0x21, t.fam, t.body));
    ASSERT_EQ(r.what, status::done);
    EXPECT_EQ(r.length, 16 + t.body.size());
    if (r.source.kind != family::none) expect_done(r, 16 + t.body.size(), t.source);
  }
}

TEST(ProxyHeaderV2, tlvs_after_the_addresses_are_part_of_the_header) {
  // NOOP, AUTHORITY "example.com", an AWS-style custom TLV (0xEA).
  const std::string tlvs =
      raw({0x04, 0, 3, 0, 0, 0}) + raw({0x02, 0, 11}) + "example.com" + raw({0xea, 0, 5, 1}) + "vpce";
  const std::string v4 = v2(0x21, 0x11, ipv4_block + tlvs);
  expect_done(parse(v4 + std::string(http_request)), 16 + 12 + tlvs.size(), v4_client);
  const std::string v6 = v2(0x21, 0x21, ipv6_block + tlvs);
  expect_done(parse(v6 + std::string(http_request)), 16 + 36 + tlvs.size(), v6_client);
  // Skipped as they come, not interpreted: a truncated TLV inside the length is not an error either.
  const std::string odd = v2(0x21, 0x11, ipv4_block + raw({0x04, 0xff}));
  expect_done(parse(odd), 16 + 14, v4_client);
}

TEST(ProxyHeaderV2, largest_header_is_accepted_when_whole) {
  const std::string tlv_pad(max_proxy_header_bytes - 16 - 12, '\0');
  const std::string header = v2(0x21, 0x11, ipv4_block + tlv_pad);
  ASSERT_EQ(header.size(), max_proxy_header_bytes);
  EXPECT_EQ(parse(std::string_view(header).substr(0, 16)).what, status::need_more);
  EXPECT_EQ(parse(std::string_view(header).substr(0, header.size() - 1)).what, status::need_more);
  expect_done(parse(header + std::string(http_request)), max_proxy_header_bytes, v4_client);
}

TEST(ProxyHeaderV2, too_long_is_refused_with_the_16_fixed_bytes) {
  for (const std::size_t n : {max_proxy_header_bytes - 16 + 1, std::size_t{4096}, std::size_t{0xffff}}) {
    SCOPED_TRACE(n);
    const std::string fixed = v2(0x21, 0x11, "", n);
    ASSERT_EQ(fixed.size(), 16u);
    expect_failed(parse(fixed), proxy_error::v2_too_long);
    EXPECT_EQ(parse(std::string_view(fixed).substr(0, 15)).what, status::need_more);
  }
}

TEST(ProxyHeaderV2, too_short_is_refused_with_the_16_fixed_bytes) {
  // The length alone says the addresses cannot fit: no reason to wait.
  expect_failed(parse(v2(0x21, 0x11, "", 11)), proxy_error::v2_too_short);
  expect_failed(parse(v2(0x21, 0x21, "", 35)), proxy_error::v2_too_short);
  expect_failed(parse(v2(0x21, 0x31, "", 215)), proxy_error::v2_too_short);
}

TEST(ProxyHeaderV2, fixed_part_errors_need_no_more_bytes) {
  expect_failed(parse(v2(0x11, 0x11, "", 12)), proxy_error::v2_bad_version);
  expect_failed(parse(v2(0x22, 0x11, "", 12)), proxy_error::v2_bad_command);
  expect_failed(parse(v2(0x21, 0x41, "", 12)), proxy_error::v2_bad_family);
}

// ---------------------------------------------------------------- signatures

TEST(ProxyHeaderSignature, something_else_first_is_not_proxy) {
  expect_failed(parse(http_request), proxy_error::not_proxy);
  expect_failed(parse("G"), proxy_error::not_proxy);
  expect_failed(parse("PROXZ"), proxy_error::not_proxy);
  expect_failed(parse("PROXZ TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"), proxy_error::not_proxy);
  expect_failed(parse(raw({0x16, 0x03, 0x01, 0x02, 0x00})), proxy_error::not_proxy);  // a TLS ClientHello
  expect_failed(parse(raw({0x00})), proxy_error::not_proxy);
}

TEST(ProxyHeaderSignature, a_start_of_either_signature_needs_more) {
  EXPECT_EQ(parse("").what, status::need_more);
  EXPECT_EQ(parse("P").what, status::need_more);
  EXPECT_EQ(parse("PROX").what, status::need_more);
  EXPECT_EQ(parse("PROXY").what, status::need_more);
  EXPECT_EQ(parse("PROXY TCP4 192.0.2.1").what, status::need_more);
  EXPECT_EQ(parse(v2_signature.substr(0, 1)).what, status::need_more);
  EXPECT_EQ(parse(v2_signature.substr(0, 5)).what, status::need_more);
  EXPECT_EQ(parse(v2_signature).what, status::need_more);
  EXPECT_EQ(parse(v2(0x21, 0x11, ipv4_block).substr(0, 13)).what, status::need_more);
  EXPECT_EQ(parse(v2(0x21, 0x11, ipv4_block).substr(0, 27)).what, status::need_more);
}

TEST(ProxyHeaderSignature, a_wrong_byte_of_the_v2_signature_is_not_proxy) {
  for (std::size_t at = 0; at < v2_signature.size(); ++at) {
    SCOPED_TRACE(at);
    std::string wrong = v2(0x21, 0x11, ipv4_block);
    wrong[at] = static_cast<char>(wrong[at] ^ 0x40);
    expect_failed(parse(wrong), proxy_error::not_proxy);
    expect_failed(parse(std::string_view(wrong).substr(0, at + 1)), proxy_error::not_proxy);
  }
  // The 6th byte: "\r\n\r\n\0" then anything but '\r'.
  expect_failed(parse(std::string(v2_signature.substr(0, 5)) + "X"), proxy_error::not_proxy);
}

// ---------------------------------------------------------------- any split

struct split_case {
  std::string name;
  std::string header;
  proxy_source source;
};

std::vector<split_case> split_cases() {
  const std::string ff = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
  proxy_source all_ones = ipv6({}, 65535);
  all_ones.bytes.fill(0xff);
  return {
      {"v1_tcp4", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", v4_client},
      {"v1_tcp6", "PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n", v6_client},
      {"v1_tcp6_longest", "PROXY TCP6 " + ff + " " + ff + " 65535 65535\r\n", all_ones},
      {"v1_unknown", "PROXY UNKNOWN\r\n", no_source},
      {"v1_unknown_longest", "PROXY UNKNOWN " + ff + " " + ff + " 65535 65535\r\n", no_source},
      {"v2_tcp4", v2(0x21, 0x11, ipv4_block), v4_client},
      {"v2_tcp6", v2(0x21, 0x21, ipv6_block), v6_client},
      {"v2_tcp4_tlvs", v2(0x21, 0x11, ipv4_block + raw({0x02, 0, 4}) + "host" + raw({0x04, 0, 0})), v4_client},
      {"v2_local", v2(0x20, 0x00, ""), no_source},
      {"v2_unspec", v2(0x21, 0x00, "xyz"), no_source},
      {"v2_unix", v2(0x21, 0x31, unix_block), no_source},
  };
}

class ProxyHeaderSplits : public ::testing::TestWithParam<split_case> {};

TEST_P(ProxyHeaderSplits, every_prefix_needs_more_then_gives_the_same_header) {
  const split_case& c = GetParam();
  const std::string input = c.header + std::string(http_request);
  for (std::size_t k = 0; k <= input.size(); ++k) {
    SCOPED_TRACE(k);
    const proxy_parse r = parse(std::string_view(input).substr(0, k));
    if (k < c.header.size()) {
      ASSERT_EQ(r.what, status::need_more);
    } else {
      expect_done(r, c.header.size(), c.source);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST_P(ProxyHeaderSplits, a_second_header_after_it_is_the_clients) {
  const split_case& c = GetParam();
  expect_done(parse(c.header + c.header), c.header.size(), c.source);
}

INSTANTIATE_TEST_SUITE_P(ProxyHeader, ProxyHeaderSplits, ::testing::ValuesIn(split_cases()), fg::test::param_name{});

// ---------------------------------------------------------------- describe

TEST(ProxyHeaderDescribe, every_error_has_its_own_line) {
  std::set<std::string_view> seen;
  for (const proxy_error e : all_errors) {
    SCOPED_TRACE(error_name(e));
    const std::string_view line = describe(e);
    EXPECT_FALSE(line.empty());
    EXPECT_EQ(line.find('\n'), std::string_view::npos);
    EXPECT_TRUE(seen.insert(line).second) << "same as another: " << line;
  }
  EXPECT_EQ(seen.size(), all_errors.size());
}

}  // namespace
}  // namespace fg::http
