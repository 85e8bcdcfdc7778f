// The `rooms` claim of a connection's token: exact names and '*' prefixes.
#include "worker/apps/room_permissions.hpp"

#include <gtest/gtest.h>

#include "tests/fakes/worker_fakes.hpp"
#include "worker/apps/rooms_app.hpp"

namespace {

using namespace fg::worker;

connection_info restricted(std::vector<std::string> patterns) {
  connection_info info;
  info.rooms_restricted = true;
  info.rooms_allowed = std::move(patterns);
  return info;
}

TEST(RoomPermissions, WithoutTheClaimEveryRoomIsAllowed) { EXPECT_TRUE(room_allowed(connection_info{}, "anything")); }

TEST(RoomPermissions, ExactNamesAndPrefixes) {
  const auto info = restricted({"lobby", "team-*"});
  EXPECT_TRUE(room_allowed(info, "lobby"));
  EXPECT_TRUE(room_allowed(info, "team-"));
  EXPECT_TRUE(room_allowed(info, "team-red"));
  EXPECT_FALSE(room_allowed(info, "lobby2"));
  EXPECT_FALSE(room_allowed(info, "lobb"));
  EXPECT_FALSE(room_allowed(info, "team"));
  EXPECT_FALSE(room_allowed(info, "Lobby"));
  EXPECT_TRUE(room_allowed(restricted({"*"}), "x"));
  EXPECT_FALSE(room_allowed(restricted({}), "x")) << "an empty claim allows nothing";
}

TEST(RoomPermissions, TheRoomsAppRefusesJoinsAndPublishesOutsideTheClaim) {
  fakes::fake_api api;
  rooms_app app;
  app.attach(api);
  connection c(restricted({"ok"}), {});
  for (const std::string_view text : {R"({"op":"join","room":"no"})", R"({"op":"publish","room":"no","data":1})",
                                      R"({"op":"join","room":"no","recover":true})"}) {
    app.on_message(c, {message_kind::text, text});
    ASSERT_FALSE(api.sends.empty());
    EXPECT_TRUE(api.sends.back().payload.starts_with(R"({"error":"forbidden: )")) << api.sends.back().payload;
  }
  EXPECT_TRUE(api.fake_rooms().published.empty());
  EXPECT_TRUE(api.fake_rooms().calls.empty()) << "nothing subscribed";
  EXPECT_TRUE(api.fake_rooms().history_calls.empty());
  app.on_message(c, {message_kind::text, R"({"op":"join","room":"ok"})"});
  app.on_message(c, {message_kind::text, R"({"op":"leave","room":"no"})"});
  EXPECT_EQ(app.local_members("ok"), 1u);
  EXPECT_EQ(api.sends.size(), 3u) << "allowed ops and leave are not answered";
}

}  // namespace
