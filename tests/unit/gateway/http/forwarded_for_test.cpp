// The hops an HTTP balancer's forwarding header names (X-Forwarded-For,
// X-Real-IP, RFC 7239 Forwarded), nearest first: every accepted form of an
// address, what counts as a hop without a known address, lists over
// several lines, and the ring that keeps only the nearest hops.
#include "gateway/http/forwarded_for.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace fg::http {
namespace {

// A hop as text ("192.0.2.1:80", "[2001:db8::1]", "-" when not known), so
// failures read as the header does.
std::string text_of(const ip_endpoint& e) {
  if (e.kind == ip_endpoint::family::none) return "-";
  std::array<char, INET6_ADDRSTRLEN> buf{};
  const bool v6 = e.kind == ip_endpoint::family::ipv6;
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, e.bytes.data(), buf.data(), buf.size());
  std::string s = v6 ? "[" + std::string(buf.data()) + "]" : std::string(buf.data());
  if (e.port != 0) s += ":" + std::to_string(e.port);
  return s;
}

// Nearest first.
std::vector<std::string> hops_of(forwarded_syntax syntax, std::initializer_list<std::string_view> lines) {
  forwarded_hops hops(syntax);
  for (const auto line : lines) hops.add_line(line);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < hops.size(); ++i) out.push_back(text_of(hops.nearest(i)));
  return out;
}

std::vector<std::string> xff(std::initializer_list<std::string_view> lines) {
  return hops_of(forwarded_syntax::address_list, lines);
}
std::vector<std::string> rfc7239(std::initializer_list<std::string_view> lines) {
  return hops_of(forwarded_syntax::rfc7239, lines);
}

using hops = std::vector<std::string>;

TEST(forwarded_for, the_header_name_picks_the_syntax) {
  EXPECT_EQ(syntax_of_header("forwarded"), forwarded_syntax::rfc7239);
  EXPECT_EQ(syntax_of_header("Forwarded"), forwarded_syntax::rfc7239);
  EXPECT_EQ(syntax_of_header("x-forwarded-for"), forwarded_syntax::address_list);
  EXPECT_EQ(syntax_of_header("x-real-ip"), forwarded_syntax::address_list);
  EXPECT_EQ(syntax_of_header("forwarded-for"), forwarded_syntax::address_list);
}

TEST(forwarded_for, every_form_of_a_node) {
  EXPECT_EQ(text_of(parse_forwarded_node("192.0.2.1")), "192.0.2.1");
  EXPECT_EQ(text_of(parse_forwarded_node("192.0.2.1:8080")), "192.0.2.1:8080");
  EXPECT_EQ(text_of(parse_forwarded_node("2001:db8::1")), "[2001:db8::1]");
  EXPECT_EQ(text_of(parse_forwarded_node("[2001:db8::1]")), "[2001:db8::1]");
  EXPECT_EQ(text_of(parse_forwarded_node("[2001:db8::1]:443")), "[2001:db8::1]:443");
  EXPECT_EQ(text_of(parse_forwarded_node("::ffff:192.0.2.1")), "[::ffff:192.0.2.1]");
  EXPECT_EQ(text_of(parse_forwarded_node("192.0.2.1:65535")), "192.0.2.1:65535");
}

TEST(forwarded_for, what_is_not_an_address) {
  for (const std::string_view node : std::initializer_list<std::string_view>{"",
                                                                             "unknown",
                                                                             "_hidden",
                                                                             "_SEVKISEK",
                                                                             "client.example",
                                                                             "192.0.2",
                                                                             "192.0.2.256",
                                                                             "192.0.2.1:",
                                                                             "192.0.2.1:x",
                                                                             "192.0.2.1:65536",
                                                                             "192.0.2.1:080",
                                                                             "[2001:db8::1",
                                                                             "[2001:db8::1]:",
                                                                             "[2001:db8::1]x",
                                                                             "[192.0.2.1]",
                                                                             "2001:db8::1%eth0",
                                                                             "2001:db8:::1",
                                                                             " 192.0.2.1",
                                                                             "192.0.2.1 ",
                                                                             std::string_view("192.0.2.1\0", 10),
                                                                             "[]",
                                                                             "[]:80",
                                                                             ":80",
                                                                             "1.2.3.4:5:6"}) {
    EXPECT_EQ(parse_forwarded_node(node).kind, ip_endpoint::family::none) << "'" << node << "'";
  }
}

TEST(forwarded_for, an_address_list_nearest_first) {
  EXPECT_EQ(xff({"203.0.113.7, 198.18.0.2, 198.18.0.1"}), (hops{"198.18.0.1", "198.18.0.2", "203.0.113.7"}));
  EXPECT_EQ(xff({"203.0.113.7"}), (hops{"203.0.113.7"}));
  EXPECT_EQ(xff({"  203.0.113.7 ,\t2001:db8::5  "}), (hops{"[2001:db8::5]", "203.0.113.7"}));
  EXPECT_EQ(xff({"203.0.113.7:5000, [2001:db8::5]:6000"}), (hops{"[2001:db8::5]:6000", "203.0.113.7:5000"}));
}

TEST(forwarded_for, empty_elements_are_skipped_and_garbage_is_a_hop_not_known) {
  EXPECT_EQ(xff({",203.0.113.7,, ,198.18.0.1,"}), (hops{"198.18.0.1", "203.0.113.7"}));
  EXPECT_EQ(xff({"unknown, 198.18.0.1"}), (hops{"198.18.0.1", "-"}));
  EXPECT_EQ(xff({"198.18.0.1, garbage!"}), (hops{"-", "198.18.0.1"}));
  EXPECT_EQ(xff({""}), hops{});
  EXPECT_EQ(xff({" , "}), hops{});
}

TEST(forwarded_for, lines_of_one_header_are_one_list_in_order) {
  EXPECT_EQ(xff({"203.0.113.7", "198.18.0.2, 198.18.0.1"}), (hops{"198.18.0.1", "198.18.0.2", "203.0.113.7"}));
  EXPECT_EQ(rfc7239({"for=203.0.113.7", "for=198.18.0.1"}), (hops{"198.18.0.1", "203.0.113.7"}));
}

TEST(forwarded_for, rfc7239_takes_each_elements_for_parameter) {
  // RFC 7239 §4 and §7's examples.
  EXPECT_EQ(rfc7239({"for=\"_gazonk\""}), (hops{"-"}));
  EXPECT_EQ(rfc7239({"For=\"[2001:db8:cafe::17]:4711\""}), (hops{"[2001:db8:cafe::17]:4711"}));
  EXPECT_EQ(rfc7239({"for=192.0.2.60;proto=http;by=203.0.113.43"}), (hops{"192.0.2.60"}));
  EXPECT_EQ(rfc7239({"for=192.0.2.43, for=198.51.100.17"}), (hops{"198.51.100.17", "192.0.2.43"}));
  EXPECT_EQ(rfc7239({"for=unknown, for=198.51.100.17;by=unknown"}), (hops{"198.51.100.17", "-"}));
  EXPECT_EQ(rfc7239({"proto=https;for=\"198.51.100.17\";host=example.com"}), (hops{"198.51.100.17"}));
  EXPECT_EQ(rfc7239({"for = 198.51.100.17 ; proto=https"}), (hops{"198.51.100.17"}));
  EXPECT_EQ(rfc7239({"FOR=198.51.100.17"}), (hops{"198.51.100.17"}));
  EXPECT_EQ(rfc7239({"for=\"192.0.2.1:80\""}), (hops{"192.0.2.1:80"}));
}

TEST(forwarded_for, rfc7239_elements_without_one_readable_for_are_hops_not_known) {
  EXPECT_EQ(rfc7239({"proto=https;by=198.18.0.1"}), (hops{"-"}));      // no for
  EXPECT_EQ(rfc7239({"for=192.0.2.1;for=192.0.2.2"}), (hops{"-"}));    // for twice
  EXPECT_EQ(rfc7239({"for=192.0.2.1;proto"}), (hops{"-"}));            // a pair without =
  EXPECT_EQ(rfc7239({"for=\"192.0.2.1"}), (hops{"-"}));                // unterminated quote
  EXPECT_EQ(rfc7239({"for=\"192.0.2\\.1\""}), (hops{"-"}));            // an escape
  EXPECT_EQ(rfc7239({"for=[2001:db8::1]"}), (hops{"[2001:db8::1]"}));  // unquoted: lenient
  EXPECT_EQ(rfc7239({"for="}), (hops{"-"}));
  EXPECT_EQ(rfc7239({";;"}), (hops{"-"}));
  // A quoted ';' belongs to its value: not the start of another pair.
  EXPECT_EQ(rfc7239({"by=\"a;for=192.0.2.9\";for=192.0.2.1"}), (hops{"192.0.2.1"}));
}

TEST(forwarded_for, a_quote_left_open_by_the_client_cannot_hide_the_hops_after_it) {
  // The client sent `for="` and its balancer appended its own element.
  EXPECT_EQ(rfc7239({"for=\"oops, for=203.0.113.7"}), (hops{"203.0.113.7", "-"}));
  EXPECT_EQ(xff({"\"oops, 203.0.113.7"}), (hops{"203.0.113.7", "-"}));
}

TEST(forwarded_for, only_the_nearest_hops_are_kept) {
  forwarded_hops one_line(forwarded_syntax::address_list);
  std::string line;
  for (int i = 1; i <= 40; ++i) line += "192.0.2." + std::to_string(i) + (i < 40 ? ", " : "");
  one_line.add_line(line);
  EXPECT_EQ(one_line.named(), 40U);
  ASSERT_EQ(one_line.size(), forwarded_hops::capacity);
  EXPECT_EQ(text_of(one_line.nearest(0)), "192.0.2.40");
  EXPECT_EQ(text_of(one_line.nearest(forwarded_hops::capacity - 1)), "192.0.2.25");
  // Over several lines the ring keeps the same nearest hops.
  forwarded_hops split(forwarded_syntax::address_list);
  for (int i = 1; i <= 40; ++i) split.add_line("192.0.2." + std::to_string(i));
  for (std::size_t i = 0; i < forwarded_hops::capacity; ++i)
    EXPECT_EQ(text_of(split.nearest(i)), text_of(one_line.nearest(i)));
}

}  // namespace
}  // namespace fg::http
