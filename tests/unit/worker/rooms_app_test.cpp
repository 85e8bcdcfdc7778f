// The rooms app against a fake api and broker: replies, memberships, the
// broker subscriptions they imply, state kept for failover, delivery.
#include "worker/apps/rooms_app.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/fakes/worker_fakes.hpp"

namespace {

using namespace fg::worker;
using fakes::fake_api;
using fakes::make_connection;

class RoomsApp : public ::testing::Test {
 protected:
  RoomsApp() { app_.attach(api_); }

  void text(connection& c, std::string_view payload) { app_.on_message(c, {message_kind::text, payload}); }
  std::string last_error() {
    EXPECT_FALSE(api_.sends.empty());
    if (api_.sends.empty()) return {};
    const auto j = nlohmann::json::parse(api_.sends.back().payload);
    EXPECT_TRUE(j.is_object() && j.size() == 1 && j.contains("error") && j["error"].is_string()) << j.dump();
    return j.value("error", "");
  }

  fake_api api_;
  rooms_app app_;
};

TEST_F(RoomsApp, PublishGoesToTheBrokerWithTheRawDataAndNothingComesBackDirectly) {
  auto c = make_connection(1);
  text(c, R"({"op":"publish","room":"r","data": {"b":[1, 2.50,"x"]} })");
  ASSERT_EQ(api_.fake_rooms().published.size(), 1u);
  EXPECT_EQ(api_.fake_rooms().published[0].room, "r");
  EXPECT_EQ(api_.fake_rooms().published[0].payload, R"({"room":"r","data":{"b":[1, 2.50,"x"]}})");
  // A publisher gets its message through the broker only (and only as a member).
  EXPECT_TRUE(api_.sends.empty());
  EXPECT_TRUE(api_.fake_rooms().calls.empty());
}

TEST_F(RoomsApp, EveryPublishOffersAllButItsLastByteForCompressionAtThePublisher) {
  auto c = make_connection(1);
  text(c, R"({"op":"publish","room":"r","data":[1,2]})");
  text(c, R"({"op":"publish","room":"r","data":3,"id":"q"})");
  app_.on_api_publish("r", "4", [](publish_receipt) {});
  const auto& published = api_.fake_rooms().published;
  ASSERT_EQ(published.size(), 3u);
  for (const auto& p : published) EXPECT_EQ(p.stable_prefix, p.payload.size() - 1) << p.payload;
}

TEST_F(RoomsApp, APublishersCompressionGoesOnWithTheDeliveryWhileItStillCoversItsStart) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r"})");
  api_.sends.clear();
  const std::string payload = R"({"room":"r","data":1})";
  const std::string segment = "\x01\x02";
  // Numbered: the offset replaces the last byte, all before it is the publisher's.
  app_.on_room_message("r", payload, {"e1", 7}, {segment, payload.size() - 1});
  ASSERT_EQ(api_.sends.size(), 1u);
  EXPECT_EQ(api_.sends[0].payload, R"({"room":"r","data":1,"offset":7})");
  EXPECT_EQ(api_.sends[0].deflated, segment);
  EXPECT_EQ(api_.sends[0].covers, payload.size() - 1);
  // A compression claiming the last byte too does not cover a numbered delivery's start.
  app_.on_room_message("r", payload, {"e1", 8}, {segment, payload.size()});
  ASSERT_EQ(api_.sends.size(), 2u);
  EXPECT_EQ(api_.sends[1].deflated, "");
  // Unnumbered, the delivery is the payload: all of it may be covered.
  app_.on_room_message("r", payload, {}, {segment, payload.size()});
  ASSERT_EQ(api_.sends.size(), 3u);
  EXPECT_EQ(api_.sends[2].payload, payload);
  EXPECT_EQ(api_.sends[2].covers, payload.size());
}

TEST_F(RoomsApp, DeliveryIsOneSendManyToAllLocalMembers) {
  auto a = make_connection(1), b = make_connection(2), outsider = make_connection(3);
  text(a, R"({"op":"join","room":"r"})");
  text(b, R"({"op":"join","room":"r"})");
  text(outsider, R"({"op":"join","room":"other"})");
  api_.sends.clear();

  app_.on_room_message("r", R"({"room":"r","data":1})", {}, {});
  ASSERT_EQ(api_.sends.size(), 1u);
  EXPECT_EQ(api_.sends[0].to, (std::vector<conn_id>{1, 2}));
  EXPECT_EQ(api_.sends[0].kind, message_kind::text);
  EXPECT_EQ(api_.sends[0].payload, R"({"room":"r","data":1})");

  app_.on_room_message("nobody-here", "x", {}, {});
  EXPECT_EQ(api_.sends.size(), 1u);
}

TEST_F(RoomsApp, SubscribedExactlyWhileALocalMemberRemains) {
  auto a = make_connection(1), b = make_connection(2);
  auto& calls = api_.fake_rooms().calls;
  text(a, R"({"op":"join","room":"r"})");
  EXPECT_EQ(calls, (std::vector<std::string>{"subscribe r"}));
  text(b, R"({"op":"join","room":"r"})");
  text(a, R"({"op":"join","room":"r"})");  // again: no-op
  EXPECT_EQ(calls.size(), 1u);
  EXPECT_EQ(app_.local_members("r"), 2u);

  text(a, R"({"op":"leave","room":"r"})");
  text(a, R"({"op":"leave","room":"r"})");  // not a member any more: no-op
  EXPECT_EQ(calls.size(), 1u);
  EXPECT_EQ(app_.local_members("r"), 1u);

  app_.on_close(b, 1000);  // the last member goes: unsubscribe
  EXPECT_EQ(calls, (std::vector<std::string>{"subscribe r", "unsubscribe r"}));
  EXPECT_EQ(app_.room_count(), 0u);
  EXPECT_TRUE(api_.sends.empty()) << "join and leave send no reply";

  text(a, R"({"op":"join","room":"r"})");
  EXPECT_EQ(calls.back(), "subscribe r");
}

TEST_F(RoomsApp, MembershipsAreKeptAsConnectionState) {
  auto a = make_connection(1);
  a.mutable_state().app_data = "opaque";
  text(a, R"({"op":"join","room":"x"})");
  text(a, R"({"op":"join","room":"y"})");
  text(a, R"({"op":"leave","room":"x"})");
  ASSERT_EQ(api_.kept.size(), 3u);
  EXPECT_EQ(api_.kept[0].second.rooms, (std::vector<std::string>{"x"}));
  EXPECT_EQ(api_.kept[1].second.rooms, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(api_.kept[2].second.rooms, (std::vector<std::string>{"y"}));
  EXPECT_EQ(api_.kept[2].second.app_data, "opaque") << "other state is carried along";
}

TEST_F(RoomsApp, AResumedConnectionGetsItsRoomsBack) {
  connection_state s;
  s.rooms = {"x", "y"};
  auto c = make_connection(9, "/rooms", true, s);
  app_.on_open(c);
  EXPECT_EQ(app_.local_members("x"), 1u);
  EXPECT_EQ(app_.local_members("y"), 1u);
  EXPECT_EQ(api_.fake_rooms().subscribed, (std::set<std::string>{"x", "y"}));
  EXPECT_TRUE(api_.kept.empty()) << "the gateway already holds this state";

  app_.on_room_message("y", "hello", {}, {});
  ASSERT_EQ(api_.sends.size(), 1u);
  EXPECT_EQ(api_.sends[0].to, (std::vector<conn_id>{9}));

  app_.on_close(c, 1006);
  EXPECT_TRUE(api_.fake_rooms().subscribed.empty());
}

TEST_F(RoomsApp, ResumedStateIsCleanedOfWhatAJoinWouldRefuse) {
  connection_state s;
  s.rooms = {"x", "", "x", std::string(300, 'l')};
  auto c = make_connection(9, "/rooms", true, s);
  app_.on_open(c);
  EXPECT_EQ(app_.room_count(), 1u);
  ASSERT_EQ(api_.kept.size(), 1u);
  EXPECT_EQ(api_.kept[0].second.rooms, (std::vector<std::string>{"x"}));
}

TEST_F(RoomsApp, ANewConnectionIgnoresStateItDidNotResume) {
  connection_state s;
  s.rooms = {"x"};
  auto c = make_connection(9, "/rooms", false, s);
  app_.on_open(c);
  EXPECT_EQ(app_.room_count(), 0u);
}

TEST_F(RoomsApp, BadInputGetsAnErrorAndTheConnectionStays) {
  auto c = make_connection(1);
  app_.on_message(c, {message_kind::binary, "\x01\x02"});
  EXPECT_NE(last_error().find("binary"), std::string::npos);
  text(c, "{oops");
  EXPECT_NE(last_error().find("invalid JSON"), std::string::npos);
  text(c, "[]");
  EXPECT_NE(last_error().find("object"), std::string::npos);
  text(c, R"({"room":"r"})");
  EXPECT_NE(last_error().find("op"), std::string::npos);
  text(c, R"({"op":"shout","room":"r"})");
  EXPECT_NE(last_error().find("unknown op"), std::string::npos);
  text(c, R"({"op":"join","room":["r"]})");
  EXPECT_NE(last_error().find("room"), std::string::npos);
  text(c, R"({"op":"publish","room":"r"})");
  EXPECT_NE(last_error().find("data"), std::string::npos);
  EXPECT_EQ(api_.sends.size(), 7u);
  for (const auto& s : api_.sends) EXPECT_EQ(s.to, (std::vector<conn_id>{1}));
  EXPECT_TRUE(api_.closes.empty());
  EXPECT_TRUE(api_.fake_rooms().published.empty());
}

TEST_F(RoomsApp, AConnectionMayJoinABoundedNumberOfRooms) {
  auto c = make_connection(1);
  for (std::size_t i = 0; i < rooms_app::max_rooms_per_connection; ++i)
    text(c, R"({"op":"join","room":"r)" + std::to_string(i) + "\"}");
  EXPECT_TRUE(api_.sends.empty());
  text(c, R"({"op":"join","room":"one-too-many"})");
  EXPECT_NE(last_error().find("too many rooms"), std::string::npos);
  EXPECT_EQ(app_.room_count(), rooms_app::max_rooms_per_connection);
  text(c, R"({"op":"join","room":"one-too-many","recover":true,"id":5})");
  const auto answer = nlohmann::json::parse(api_.sends.back().payload);
  EXPECT_EQ(answer["id"], 5) << "the refusal answers the op's id";
  EXPECT_NE(answer["error"].get<std::string>().find("too many rooms"), std::string::npos);
  EXPECT_EQ(app_.room_count(), rooms_app::max_rooms_per_connection);
}

}  // namespace
