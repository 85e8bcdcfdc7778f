#include "gateway/auth/base64url.hpp"

#include <gtest/gtest.h>

namespace fg::auth {
namespace {

TEST(Base64Url, RoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    std::string out;
    ASSERT_TRUE(base64url_decode(base64url_encode(bytes), out)) << i;
    EXPECT_EQ(out, bytes);
    bytes.push_back(static_cast<char>(0xF0 ^ (i * 37)));
  }
}

TEST(Base64Url, KnownVectors) {
  // RFC 4648 §10, in the URL alphabet and without padding.
  EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64url_encode("fo"), "Zm8");
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  std::string out;
  ASSERT_TRUE(base64url_decode("-_8", out));
  EXPECT_EQ(out, "\xfb\xff");
}

TEST(Base64Url, RefusesWhatIsNotStrictBase64Url) {
  std::string out;
  EXPECT_FALSE(base64url_decode("Zm8=", out)) << "padding";
  EXPECT_FALSE(base64url_decode("+/8", out)) << "the standard alphabet";
  EXPECT_FALSE(base64url_decode("Zm 8", out)) << "whitespace";
  EXPECT_FALSE(base64url_decode("Zm9vY", out)) << "a length of 1 mod 4";
  EXPECT_FALSE(base64url_decode("Zm9", out)) << "non-zero unused bits: 'Zm8' is the one encoding of \"fo\"";
  EXPECT_FALSE(base64url_decode("Zh", out)) << "non-zero unused bits";
  EXPECT_FALSE(base64url_decode(std::string_view("Zm\0o", 4), out)) << "NUL";
  EXPECT_TRUE(base64url_decode("", out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace fg::auth
