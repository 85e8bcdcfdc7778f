#include "gateway/routing/sticky_key.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace fg::gateway {
namespace {

request_info with(std::string query = {}, std::vector<std::pair<std::string, std::string>> headers = {}) {
  request_info r;
  r.path = "/rooms";
  r.remote_address = "198.18.0.9";
  r.query = std::move(query);
  r.headers = std::move(headers);
  return r;
}

TEST(sticky_key_spec, parses_every_kind_and_lower_cases_header_names) {
  EXPECT_EQ(parse_sticky_key_spec("conn").from, sticky_key_spec::source::conn);
  EXPECT_EQ(parse_sticky_key_spec("ip").from, sticky_key_spec::source::ip);
  const auto h = parse_sticky_key_spec("header:X-User");
  EXPECT_EQ(h.from, sticky_key_spec::source::header);
  EXPECT_EQ(h.name, "x-user");
  const auto q = parse_sticky_key_spec("query:User");
  EXPECT_EQ(q.from, sticky_key_spec::source::query);
  EXPECT_EQ(q.name, "User");  // query parameters are case-sensitive
  EXPECT_EQ(parse_sticky_key_spec("cookie:sid").from, sticky_key_spec::source::cookie);
}

TEST(sticky_key_spec, refuses_what_it_does_not_know) {
  for (const char* bad : {"", "host", "header:", "query", "cookie:", "IP"})
    EXPECT_THROW(parse_sticky_key_spec(bad), std::invalid_argument) << bad;
}

TEST(sticky_key_for, takes_the_value_of_each_kind) {
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("conn"), with(), 4), "conn:4");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("ip"), with(), 4), "198.18.0.9");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("header:x-user"), with({}, {{"x-user", "bob"}}), 4), "bob");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("query:u"), with("a=1&u=bob&b=2"), 4), "bob");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("cookie:sid"), with({}, {{"cookie", "a=1; sid=s9; b=2"}}), 4), "s9");
  auto alice = with();
  alice.user = "alice";
  EXPECT_EQ(parse_sticky_key_spec("user").from, sticky_key_spec::source::user);
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("user"), alice, 4), "alice");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("user"), with(), 4), "conn:4") << "anonymous";
}

TEST(sticky_key_for, falls_back_to_the_connection_when_the_value_is_absent_or_empty) {
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("header:x-user"), with(), 4), "conn:4");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("header:x-user"), with({}, {{"x-user", ""}}), 4), "conn:4");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("query:u"), with("uu=1&u="), 4), "conn:4");
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("cookie:sid"), with({}, {{"cookie", "sidx=1"}}), 4), "conn:4");
  auto no_ip = with();
  no_ip.remote_address.clear();
  EXPECT_EQ(sticky_key_for(parse_sticky_key_spec("ip"), no_ip, 4), "conn:4");
}

}  // namespace
}  // namespace fg::gateway
