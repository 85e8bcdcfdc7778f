#include "worker/apps/rooms_protocol.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "common/json/json_text.hpp"

namespace {

using fg::worker::parse_rooms_request;
using fg::worker::rooms_op;

std::string error_of(std::string_view text) {
  const auto r = parse_rooms_request(text);
  EXPECT_FALSE(r.request) << text;
  EXPECT_FALSE(r.error.empty()) << text;
  return r.error;
}

TEST(RoomsProtocol, ParsesJoinLeavePublish) {
  auto r = parse_rooms_request(R"({"op":"join","room":"lobby"})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->op, rooms_op::join);
  EXPECT_EQ(r.request->room, "lobby");

  r = parse_rooms_request(R"({"room":"lobby","op":"leave","extra":[1]})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->op, rooms_op::leave);

  r = parse_rooms_request(R"({"op":"publish","room":"r","data":"hi"})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->op, rooms_op::publish);
  EXPECT_EQ(r.request->data, R"("hi")");
}

TEST(RoomsProtocol, PublishedDataIsTheRawSpanByteForByte) {
  const std::string text = R"({"op":"publish","room":"r","data": {"b":[1, 2.50,"x"]} })";
  const auto r = parse_rooms_request(text);
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->data, R"({"b":[1, 2.50,"x"]})");
  EXPECT_EQ(fg::worker::rooms_delivery(r.request->room, r.request->data), R"({"room":"r","data":{"b":[1, 2.50,"x"]}})");

  // Values a re-serializer would change: exponent, trailing zeros, escapes, big ints.
  for (const std::string data : {"1E+2", "0.10", R"("\u00e9\/")", "123456789012345678901234567890", "-0", "null",
                                 "false", R"([ ])", R"({ "k" : "v" })"}) {
    const std::string message = R"({"op":"publish","data":)" + data + R"(,"room":"r"})";
    const auto p = parse_rooms_request(message);  // data points into message
    ASSERT_TRUE(p.request) << data << ": " << p.error;
    EXPECT_EQ(p.request->data, data);
  }
}

TEST(RoomsProtocol, DeliveryIsValidJsonWithTheRoomReSerialized) {
  const auto r = parse_rooms_request(R"({"op":"publish","room":"a\"b\u00e9","data":[1]})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->room, "a\"b\xC3\xA9");
  const auto delivery = fg::worker::rooms_delivery(r.request->room, r.request->data);
  const auto parsed = nlohmann::json::parse(delivery);
  EXPECT_EQ(parsed["room"], "a\"b\xC3\xA9");
  EXPECT_EQ(parsed["data"], nlohmann::json::array({1}));
}

TEST(RoomsProtocol, EscapedKeysAndRepeatedKeysFollowJson) {
  auto r = parse_rooms_request(R"({"\u006fp":"join","ro\u006fm":"x"})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->room, "x");
  // The last of repeated members counts.
  r = parse_rooms_request(R"({"op":"leave","room":"x","op":"join"})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->op, rooms_op::join);
}

TEST(RoomsProtocol, EachProblemGetsItsOwnError) {
  EXPECT_NE(error_of("{not json").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of("").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join","room":"x"} trailing)").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"(["join","x"])").find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"("join")").find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"room":"x"})").find("missing \"op\""), std::string::npos);
  EXPECT_NE(error_of(R"({"op":1,"room":"x"})").find("\"op\" must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"dance","room":"x"})").find("unknown op \"dance\""), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join"})").find("missing \"room\""), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join","room":5})").find("\"room\" must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join","room":null})").find("\"room\" must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join","room":""})").find("must not be empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"op":"join","room":")" + std::string(257, 'r') + "\"}").find("longer than 256"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"op":"publish","room":"x"})").find("needs \"data\""), std::string::npos);
}

TEST(RoomsProtocol, RoomNamesUpTo256BytesAreFine) {
  const auto r = parse_rooms_request(R"({"op":"join","room":")" + std::string(256, 'r') + "\"}");
  EXPECT_TRUE(r.request) << r.error;
}

TEST(RoomsProtocol, ErrorsAreJsonObjectsWithAnErrorString) {
  const auto e = fg::worker::rooms_error(R"(bad "thing")");
  EXPECT_EQ(nlohmann::json::parse(e), nlohmann::json({{"error", R"(bad "thing")"}}));
  // Whatever the input, the error text (which may quote it) stays valid JSON.
  const auto r = parse_rooms_request(R"({"op":"\u0000\"}","room":"x"})");
  ASSERT_FALSE(r.request);
  EXPECT_TRUE(nlohmann::json::accept(fg::worker::rooms_error(r.error)));
}

TEST(RoomsProtocol, DeepNestingIsAnAnswerNotACrash) {
  const auto nested = [](std::size_t depth) {
    return R"({"op":"publish","room":"r","data":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
  };
  // The object itself is one level: data may nest max_depth - 1 more.
  const auto r = parse_rooms_request(nested(fg::json::max_depth - 1));
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->data.size(), 2 * (fg::json::max_depth - 1));
  const auto too_deep = parse_rooms_request(nested(50000));
  ASSERT_FALSE(too_deep.request);
  EXPECT_EQ(too_deep.error, "invalid JSON: nested more than 512 levels deep");
  EXPECT_FALSE(parse_rooms_request(std::string(50000, '[')).request);
}

}  // namespace
