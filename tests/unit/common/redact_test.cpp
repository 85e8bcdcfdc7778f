// URLs as every binary logs them: the password replaced, the address kept.
#include "common/redact.hpp"

#include <gtest/gtest.h>

namespace {

using fg::redact_url;

TEST(RedactUrl, HidesThePasswordOfTheUserinfo) {
  EXPECT_EQ(redact_url("redis://user:s3cret@host:6379/2"), "redis://user:***@host:6379/2");
  EXPECT_EQ(redact_url("redis://:s3cret@host"), "redis://:***@host");
  EXPECT_EQ(redact_url("redis://:s3cret@[::1]:6379"), "redis://:***@[::1]:6379");
}

TEST(RedactUrl, APasswordMayHoldDelimiters) {
  // redis_url.cpp reads the userinfo up to the last '@': so does the redaction.
  EXPECT_EQ(redact_url("redis://u:p@ss/w?rd@host:1"), "redis://u:***@host:1");
  EXPECT_EQ(redact_url("redis://u:a:b@host"), "redis://u:***@host");
}

TEST(RedactUrl, AUserinfoWithoutColonIsHiddenWhole) {
  // Some clients read redis://SECRET@host as the password.
  EXPECT_EQ(redact_url("redis://s3cret@host"), "redis://***@host");
}

TEST(RedactUrl, HidesSecretQueryParameters) {
  EXPECT_EQ(redact_url("unix:///run/r.sock?db=1&user=u&password=s3cret"),
            "unix:///run/r.sock?db=1&user=u&password=***");
  EXPECT_EQ(redact_url("unix:///s?Password=a@b&token=t&x=1"), "unix:///s?Password=***&token=***&x=1");
  EXPECT_EQ(redact_url("http://h/p?secret=1&pass=2"), "http://h/p?secret=***&pass=***");
}

TEST(RedactUrl, LeavesUrlsWithoutSecretsAlone) {
  for (const char* url : {"redis://host:6379", "unix:///run/r.sock", "unix:///s?db=3", "redis://[::1]", "", "host:1"})
    EXPECT_EQ(redact_url(url), url);
}

TEST(RedactUrl, NeverShowsTheSecretWhateverTheShape) {
  for (const char* url : {"redis://u:topsecret@h", "redis://topsecret@h", "unix:///s?password=topsecret",
                          "password=topsecret", "redis://u:top@secret@h/0", "x://u:topsecret@h?token=topsecret"}) {
    const auto shown = redact_url(url);
    EXPECT_EQ(shown.find("topsecret"), std::string::npos) << url << " -> " << shown;
    EXPECT_NE(shown.find(fg::redacted), std::string::npos) << url << " -> " << shown;
  }
}

}  // namespace
