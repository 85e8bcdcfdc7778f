#include "gateway/auth/token_source.hpp"

#include <gtest/gtest.h>

namespace fg::auth {
namespace {

TEST(TokenSource, BearerHeaderFirstThenTheQuery) {
  EXPECT_EQ(find_token("Bearer abc", "token=q"), "abc");
  EXPECT_EQ(find_token("bearer   abc ", ""), "abc") << "the scheme is case-insensitive";
  EXPECT_EQ(find_token("", "a=1&token=q.r.s&b=2"), "q.r.s");
  EXPECT_EQ(find_token("Basic dXNlcjpwdw==", "token=q"), "q") << "another scheme is not a token";
  EXPECT_EQ(find_token("Bearerabc", ""), std::nullopt);
  EXPECT_EQ(find_token("", "tokens=1&xtoken=2"), std::nullopt);
  EXPECT_EQ(find_token("", ""), std::nullopt);
  // Present but empty: a token, and a malformed one (not "anonymous").
  EXPECT_EQ(find_token("Bearer", ""), "");
  EXPECT_EQ(find_token("", "token="), "");
}

TEST(TokenSource, TheTokenIsRemovedFromTheForwardedQuery) {
  EXPECT_EQ(without_token_param("token=x"), "");
  EXPECT_EQ(without_token_param("a=1&token=x&b=2"), "a=1&b=2");
  EXPECT_EQ(without_token_param("token=x&token=y&room=r"), "room=r");
  EXPECT_EQ(without_token_param("tokens=1&a"), "tokens=1&a");
  // Whatever find_token() takes as the token goes, blanks around it or not.
  EXPECT_EQ(without_token_param("a=1& token=x&\ttoken=y"), "a=1");
  EXPECT_FALSE(find_token("", without_token_param("a=1& token=x")).has_value());
  EXPECT_EQ(without_token_param(""), "");
}

}  // namespace
}  // namespace fg::auth
