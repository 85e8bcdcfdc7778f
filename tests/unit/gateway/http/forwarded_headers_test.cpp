#include "gateway/http/forwarded_headers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

namespace http = boost::beast::http;
using headers = std::vector<std::pair<std::string, std::string>>;

http::request_header<> request_with(const headers& fields) {
  http::request_header<> req;
  for (const auto& [name, value] : fields) req.insert(name, value);
  return req;
}

TEST(forwarded_headers, origin_and_cookie_always_go_other_headers_only_when_named) {
  const auto req = request_with({{"Host", "h"}, {"Origin", "http://a.example"}, {"Cookie", "a=1"}, {"X-Team", "red"}});
  EXPECT_EQ(fg::http::forwarded_headers(req, {}), (headers{{"origin", "http://a.example"}, {"cookie", "a=1"}}));
  const std::vector<std::string> extra{"x-team"};
  EXPECT_EQ(fg::http::forwarded_headers(req, extra),
            (headers{{"origin", "http://a.example"}, {"cookie", "a=1"}, {"x-team", "red"}}));
}

// Repeats were each sent as their own pair, and the link's map kept only
// the last: an app saw one of several values.
TEST(forwarded_headers, repeated_header_is_joined_with_commas_in_order) {
  const auto req = request_with({{"X-Team", "red"}, {"Host", "h"}, {"x-team", "blue, green"}});
  const std::vector<std::string> extra{"x-team"};
  EXPECT_EQ(fg::http::forwarded_headers(req, extra), (headers{{"x-team", "red, blue, green"}}));
}

TEST(forwarded_headers, repeated_cookie_is_joined_with_semicolons) {
  const auto req = request_with({{"Cookie", "a=1"}, {"Cookie", "b=2; c=3"}});
  EXPECT_EQ(fg::http::forwarded_headers(req, {}), (headers{{"cookie", "a=1; b=2; c=3"}}));
}

}  // namespace
