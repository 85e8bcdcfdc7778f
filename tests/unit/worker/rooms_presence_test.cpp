// /rooms ops with ids (one answer each), presence (the broker's shared
// count per user) and presence events (their own broker room, listeners only).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/fakes/worker_fakes.hpp"
#include "worker/apps/rooms_app.hpp"

namespace {

using namespace fg::worker;
using fakes::fake_api;

const std::string events_room = "\x1fpresence:r";

class RoomsOps : public ::testing::Test {
 protected:
  RoomsOps() { app_.attach(api_); }

  static connection member(conn_id id, std::string user, bool resumed = false, connection_state state = {}) {
    connection_info info;
    info.id = id;
    info.path = "/rooms";
    info.user = std::move(user);
    info.resumed = resumed;
    return connection(std::move(info), std::move(state));
  }
  void text(connection& c, std::string_view payload) { app_.on_message(c, {message_kind::text, payload}); }
  nlohmann::json last() const { return nlohmann::json::parse(api_.sends.back().payload); }
  fakes::fake_broker& broker() { return api_.fake_rooms(); }

  fake_api api_;
  rooms_app app_;
};

TEST_F(RoomsOps, WithAnIdEveryOpGetsExactlyOneAnswerRepeatingIt) {
  auto c = member(1, "alice");
  text(c, R"({"op":"join","room":"r","id":1})");
  EXPECT_EQ(api_.sends.back().payload, R"({"joined":"r","id":1})");
  text(c, R"({"op":"join","room":"r","id":"again"})");
  EXPECT_EQ(api_.sends.back().payload, R"({"joined":"r","id":"again"})") << "idempotent, still answered";
  text(c, R"({"op":"leave","room":"r","id":2.5})");
  EXPECT_EQ(api_.sends.back().payload, R"({"left":"r","id":2.5})");
  text(c, R"({"op":"nope","room":"r","id":3})");
  EXPECT_EQ(last()["id"], 3);
  EXPECT_TRUE(last()["error"].get<std::string>().starts_with("unknown op"));
  EXPECT_EQ(api_.sends.size(), 4u);

  text(c, R"({"op":"join","room":"r"})");
  text(c, R"({"op":"leave","room":"r"})");
  EXPECT_EQ(api_.sends.size(), 4u) << "without an id, joins and leaves are not answered";
}

TEST_F(RoomsOps, APublishWithAnIdIsAnsweredWithItsReceipt) {
  auto c = member(1, "alice");
  text(c, R"({"op":"publish","room":"r","data":1})");
  EXPECT_TRUE(broker().receipts.empty()) << "no id, no receipt asked";
  text(c, R"({"op":"publish","room":"r","data":2,"id":"p2"})");
  text(c, R"({"op":"publish","room":"r","data":3,"id":"p3"})");
  ASSERT_EQ(broker().receipts.size(), 2u);
  EXPECT_TRUE(api_.sends.empty()) << "answered when the broker took it";
  broker().answer_publish({true, 42, {}});
  EXPECT_EQ(api_.sends.back().payload, R"({"published":"r","offset":42,"id":"p2"})");
  broker().answer_publish({false, 0, "the Redis outbox is full"});
  EXPECT_EQ(last()["id"], "p3");
  EXPECT_EQ(last()["error"], "publish failed: the Redis outbox is full");
}

TEST_F(RoomsOps, ABadIdIsRefusedAndControlCharactersNameNoRoom) {
  auto c = member(1, "alice");
  text(c, R"({"op":"join","room":"r","id":{"x":1}})");
  EXPECT_TRUE(last()["error"].get<std::string>().starts_with("\"id\" must be"));
  text(c, R"({"op":"join","room":"r","id":")" + std::string(70, 'x') + R"("})");
  EXPECT_TRUE(last()["error"].get<std::string>().starts_with("\"id\" must be"));
  text(c, R"({"op":"join","room":"\u001fpresence:r"})");
  EXPECT_EQ(last()["error"], "\"room\" must not contain control characters");
  EXPECT_TRUE(broker().calls.empty());
}

TEST_F(RoomsOps, PresenceCountsEachUsersConnectionsHere) {
  auto a1 = member(1, "alice"), a2 = member(2, "alice"), b = member(3, "bob");
  text(a1, R"({"op":"join","room":"r"})");
  text(a2, R"({"op":"join","room":"r","recover":true})");
  text(b, R"({"op":"join","room":"r"})");
  text(a1, R"({"op":"leave","room":"r"})");
  app_.on_close(a2, 1000);
  EXPECT_EQ(broker().presence_calls,
            (std::vector<std::string>{"r alice=1", "r alice=2", "r bob=1", "r alice=1", "r alice=0"}));
  text(b, R"({"op":"join","room":"r","recover":true})");  // asking again is not a second connection
  EXPECT_EQ(broker().presence_calls.size(), 5u);
}

TEST_F(RoomsOps, ThePresenceOpAnswersWhatTheBrokerCounted) {
  auto c = member(1, "alice");
  broker().presence_answer = {true, {{"alice", 2}, {"bob", 1}}, {}};
  text(c, R"({"op":"presence","room":"r","id":9})");
  EXPECT_EQ(broker().presence_asked, (std::vector<std::string>{"r"}));
  EXPECT_EQ(api_.sends.back().payload,
            R"({"presence":"r","members":[{"user":"alice","connections":2},{"user":"bob","connections":1}],"id":9})");
  broker().presence_answer = {false, {}, "presence needs Redis (--redis)"};
  text(c, R"({"op":"presence","room":"r"})");
  EXPECT_EQ(last()["error"], "presence: presence needs Redis (--redis)");
}

TEST_F(RoomsOps, JoinsAndLeavesAreAnnouncedToListenersOnly) {
  auto listener = member(1, "alice"), other = member(2, "bob"), quiet = member(3, "carol");
  text(listener, R"({"op":"join","room":"r","presence_events":true})");
  EXPECT_EQ(broker().calls, (std::vector<std::string>{"subscribe r", "subscribe " + events_room}));
  text(quiet, R"({"op":"join","room":"r"})");
  text(other, R"({"op":"join","room":"r"})");
  text(other, R"({"op":"leave","room":"r"})");
  std::vector<std::string> events;
  for (const auto& p : broker().published) {
    EXPECT_EQ(p.room, events_room);
    EXPECT_FALSE(p.numbered) << "events are never numbered";
    events.push_back(p.payload);
  }
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2], R"({"room":"r","presence_event":"join","user":"bob"})");
  EXPECT_EQ(events[3], R"({"room":"r","presence_event":"leave","user":"bob"})");

  // What comes back through the broker goes to the listener only.
  api_.sends.clear();
  app_.on_room_message(events_room, events[2], {}, {});
  ASSERT_EQ(api_.sends.size(), 1u);
  EXPECT_EQ(api_.sends[0].to, (std::vector<conn_id>{1}));
  EXPECT_EQ(api_.sends[0].payload, events[2]);

  app_.on_close(listener, 1000);
  EXPECT_EQ(broker().calls.back(), "unsubscribe " + events_room) << "no listener left";
}

TEST_F(RoomsOps, AResumedMemberIsCountedButNotAnnounced) {
  connection_state s;
  s.rooms = {"r"};
  auto c = member(1, "alice", true, s);
  app_.on_open(c);
  EXPECT_EQ(broker().presence_calls, (std::vector<std::string>{"r alice=1"}));
  EXPECT_TRUE(broker().published.empty());
}

}  // namespace
