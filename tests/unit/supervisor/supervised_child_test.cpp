// How the supervisor relays a child's stderr lines.
#include "supervisor/supervised_child.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace {

using fg::supervisor::relayed;

TEST(Relay, TextLinesArePrefixedWithTheChild) { EXPECT_EQ(relayed("w1", "ready", false), "[w1] ready\n"); }

TEST(Relay, JsonMakesEveryLineOneObject) {
  // A child's own JSON line gains the child's name.
  const auto own = nlohmann::json::parse(relayed("w2", R"({"level":"info","msg":"hi"})", true));
  EXPECT_EQ(own, nlohmann::json::parse(R"({"child":"w2","level":"info","msg":"hi"})"));
  EXPECT_EQ(nlohmann::json::parse(relayed("w2", "{}", true)), nlohmann::json::parse(R"({"child":"w2"})"));
  // Anything else becomes the message of one, escaped.
  const auto text = nlohmann::json::parse(relayed("redis", "a \"quoted\"\tline \\ {", true));
  EXPECT_EQ(text["child"], "redis");
  EXPECT_EQ(text["msg"], "a \"quoted\"\tline \\ {");
  EXPECT_EQ(relayed("gateway", "x", true).back(), '\n');
}

}  // namespace
