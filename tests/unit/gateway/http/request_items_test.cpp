// Query parameters and cookies as every lookup of the gateway names them.
#include "gateway/http/request_items.hpp"

#include <gtest/gtest.h>

namespace fg::http {
namespace {

TEST(find_query_param, matches_whole_names_only) {
  std::string_view v;
  EXPECT_TRUE(find_query_param("user=1&u=2", "u", v));
  EXPECT_EQ(v, "2");
  EXPECT_FALSE(find_query_param("user=1", "u", v));
  EXPECT_TRUE(find_query_param("u", "u", v));
  EXPECT_EQ(v, "");
}

TEST(find_cookie, matches_whole_names_and_trims_the_separator_space) {
  std::string_view v;
  EXPECT_TRUE(find_cookie("a=1; sid=abc", "sid", v));
  EXPECT_EQ(v, "abc");
  EXPECT_FALSE(find_cookie("xsid=abc", "sid", v));
}

TEST(pair_name, is_the_name_without_blanks_or_value) {
  EXPECT_EQ(pair_name("a=1"), "a");
  EXPECT_EQ(pair_name(" \ttoken=x"), "token");
  EXPECT_EQ(pair_name("flag"), "flag");
  EXPECT_EQ(pair_name("=v"), "");
}

}  // namespace
}  // namespace fg::http
