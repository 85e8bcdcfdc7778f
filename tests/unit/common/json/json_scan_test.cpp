#include "common/json/json_scan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

namespace json = fg::json;

std::vector<std::pair<std::string, std::string>> members(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  json::for_each_member(text, [&](std::string_view k, std::string_view v) { out.emplace_back(k, v); });
  return out;
}

TEST(JsonScan, MembersKeepTheExactBytesOfTheirValues) {
  const auto m = members(R"( { "a" : {"b":[1, 2.50,"x"]} , "s":"q\"}" ,"n":-1.0e+2,"t":true,"z":null, "e":[] } )");
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], std::make_pair(std::string(R"("a")"), std::string(R"({"b":[1, 2.50,"x"]})")));
  EXPECT_EQ(m[1].second, R"("q\"}")");
  EXPECT_EQ(m[2].second, "-1.0e+2");
  EXPECT_EQ(m[3].second, "true");
  EXPECT_EQ(m[4].second, "null");
  EXPECT_EQ(m[5].second, "[]");
}

TEST(JsonScan, BracketsInsideStringsDoNotCount) {
  const auto m = members(R"({"d":{"x":"}]\\","y":["[",{"}":"{"}]},"after":1})");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].second, R"({"x":"}]\\","y":["[",{"}":"{"}]})");
  EXPECT_EQ(m[1].second, "1");
}

TEST(JsonScan, NonObjectsHaveNoMembers) {
  for (const char* text : {"[1,2]", "\"s\"", "1", "null", "  "}) {
    bool called = false;
    EXPECT_FALSE(json::for_each_member(text, [&](auto, auto) { called = true; })) << text;
    EXPECT_FALSE(called);
  }
  EXPECT_TRUE(json::for_each_member("{}", [](auto, auto) {}));
  EXPECT_TRUE(members("{ }").empty());
}

TEST(JsonScan, DeepNestingIsScannedWithoutRecursion) {
  std::string deep = R"({"d":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const auto m = members(deep);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].second.size(), 200000u);
}

TEST(JsonScan, StringsDecodeAndCompareThroughEscapes) {
  EXPECT_EQ(json::decode_string(R"("plain")"), "plain");
  EXPECT_EQ(json::decode_string(R"("a\u0062\n\"")"), "ab\n\"");
  EXPECT_EQ(json::decode_string(R"("\ud83d\ude00")"), "\xF0\x9F\x98\x80");
  EXPECT_TRUE(json::string_equals(R"("op")", "op"));
  EXPECT_TRUE(json::string_equals(R"("\u006fp")", "op"));
  EXPECT_FALSE(json::string_equals(R"("opx")", "op"));
  EXPECT_FALSE(json::string_equals(R"("o")", "op"));
}

TEST(JsonScan, KindsFollowTheFirstByte) {
  EXPECT_EQ(json::kind_of("{}"), json::value_kind::object);
  EXPECT_EQ(json::kind_of("[]"), json::value_kind::array);
  EXPECT_EQ(json::kind_of("\"\""), json::value_kind::string);
  EXPECT_EQ(json::kind_of("-1"), json::value_kind::number);
  EXPECT_EQ(json::kind_of("false"), json::value_kind::boolean);
  EXPECT_EQ(json::kind_of("null"), json::value_kind::null);
}

}  // namespace

namespace {

std::vector<std::string> elements(std::string_view raw) {
  std::vector<std::string> out;
  fg::json::for_each_element(raw, [&](std::string_view v) { out.emplace_back(v); });
  return out;
}

TEST(JsonScan, ElementsKeepTheExactBytesOfTheirValues) {
  EXPECT_EQ(elements(R"([ {"a": [1, 2.50]} , "x,]" ,3 ])"),
            (std::vector<std::string>{R"({"a": [1, 2.50]})", R"("x,]")", "3"}));
  EXPECT_TRUE(elements("[]").empty());
  EXPECT_TRUE(elements("[ ]").empty());
  bool called = false;
  EXPECT_FALSE(fg::json::for_each_element(R"({"a":1})", [&](auto) { called = true; }));
  EXPECT_FALSE(called);
}

}  // namespace
