// Recovery in the rooms app: a join with "recover" or "since" waits for the
// broker's history, live messages meanwhile are held, and the member gets
// history, answer and held messages in offset order, each once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/fakes/worker_fakes.hpp"
#include "worker/apps/rooms_app.hpp"
#include "worker/broker/history_lookup.hpp"

namespace {

using namespace fg::worker;
using fakes::fake_api;
using fakes::fake_broker;
using fakes::make_connection;
using outcome = room_history::outcome;

class RoomsRecovery : public ::testing::Test {
 protected:
  RoomsRecovery() { app_.attach(api_); }

  void text(connection& c, std::string_view payload) { app_.on_message(c, {message_kind::text, payload}); }
  void live(std::uint64_t offset) {
    app_.on_room_message("r", R"({"room":"r","data":)" + std::to_string(offset) + "}", {"e1", offset}, {});
  }
  // What connection `id` received, as JSON, in order.
  std::vector<nlohmann::json> received(conn_id id) const {
    std::vector<nlohmann::json> out;
    for (const auto& s : api_.sends)
      if (std::find(s.to.begin(), s.to.end(), id) != s.to.end()) out.push_back(nlohmann::json::parse(s.payload));
    return out;
  }
  static room_history found(outcome o, std::uint64_t top, std::vector<std::uint64_t> offsets = {}) {
    room_history h;
    h.result = o;
    h.epoch = "e1";
    h.top = top;
    for (const auto n : offsets) h.entries.push_back({n, R"({"room":"r","data":)" + std::to_string(n) + "}"});
    return h;
  }
  fake_broker& broker() { return api_.fake_rooms(); }

  fake_api api_;
  rooms_app app_;
};

TEST_F(RoomsRecovery, LiveDeliveriesCarryTheirOffset) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r"})");
  live(7);
  app_.on_room_message("r", "foreign bytes", {}, {});
  ASSERT_EQ(api_.sends.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(api_.sends[0].payload), nlohmann::json::parse(R"({"room":"r","data":7,"offset":7})"));
  EXPECT_EQ(api_.sends[1].payload, "foreign bytes") << "a message without a position goes out as it came";
}

TEST_F(RoomsRecovery, RecoverAnswersWithThePositionThenLiveMessagesAboveIt) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r","recover":true})");
  ASSERT_EQ(broker().history_calls.size(), 1u);
  EXPECT_FALSE(broker().history_calls[0].since.has_value());
  EXPECT_EQ(broker().calls, (std::vector<std::string>{"subscribe r"})) << "subscribed before the history is read";
  live(5);  // published before the read: inside the history's top, not repeated
  live(6);
  EXPECT_TRUE(received(1).empty()) << "held while waiting";
  broker().answer_history(found(outcome::current, 5));
  live(7);
  const auto got = received(1);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], nlohmann::json::parse(R"({"joined":"r","epoch":"e1","offset":5})"));
  EXPECT_EQ(got[1]["offset"], 6);
  EXPECT_EQ(got[2]["offset"], 7);
}

TEST_F(RoomsRecovery, SinceDeliversTheGapThenTheAnswerThenTheHeldRestEachOnce) {
  auto a = make_connection(1), other = make_connection(2);
  text(other, R"({"op":"join","room":"r"})");
  text(a, R"({"op":"join","room":"r","since":{"epoch":"e1","offset":3}})");
  ASSERT_EQ(broker().history_calls.size(), 1u);
  ASSERT_TRUE(broker().history_calls[0].since.has_value());
  EXPECT_EQ(broker().history_calls[0].since->epoch, "e1");
  EXPECT_EQ(broker().history_calls[0].since->offset, 3u);
  live(5);
  live(6);
  broker().answer_history(found(outcome::recovered, 5, {4, 5}));
  live(7);
  std::vector<std::uint64_t> offsets;
  nlohmann::json answer;
  for (const auto& j : received(1)) {
    if (j.contains("joined")) {
      answer = j;
      offsets.push_back(0);  // where the answer came
    } else {
      offsets.push_back(j["offset"]);
    }
  }
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{4, 5, 0, 6, 7}));
  EXPECT_EQ(answer, nlohmann::json::parse(R"({"joined":"r","epoch":"e1","offset":5,"recovered":true})"));
  EXPECT_EQ(received(2).size(), 3u) << "the other member got the live ones, once";
}

TEST_F(RoomsRecovery, AnUnrecoverablePositionSaysWhyAndJoinsLive) {
  struct expectation {
    outcome o;
    std::string reason_part;
  };
  conn_id next = 1;
  for (const auto& [o, part] :
       {expectation{outcome::epoch_changed, "new epoch"}, expectation{outcome::trimmed, "no longer reaches"},
        expectation{outcome::ahead, "ahead"}}) {
    auto c = make_connection(next);
    text(c, R"({"op":"join","room":"r","since":{"epoch":"old","offset":3}})");
    live(9);
    broker().answer_history(found(o, 8));
    const auto got = received(next);
    ASSERT_EQ(got.size(), 2u) << history_outcome_name(o);
    EXPECT_EQ(got[0]["recovered"], false);
    EXPECT_EQ(got[0]["epoch"], "e1");
    EXPECT_EQ(got[0]["offset"], 8);
    EXPECT_NE(got[0]["reason"].get<std::string>().find(part), std::string::npos) << got[0].dump();
    EXPECT_EQ(got[1]["offset"], 9) << "then live, from above the top";
    app_.on_close(c, 1000);
    ++next;
  }
}

TEST_F(RoomsRecovery, WithoutHistoryTheAnswerSaysSoAndNothingIsLost) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r","since":{"epoch":"e","offset":1}})");
  app_.on_room_message("r", R"({"room":"r","data":1})", {}, {});
  broker().answer_history(room_history{});  // off
  const auto got = received(1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["history"], false);
  EXPECT_EQ(got[0]["recovered"], false);
  EXPECT_EQ(got[1]["data"], 1) << "held messages without a position all follow";
}

TEST_F(RoomsRecovery, AnAnswerForAMemberThatLeftIsIgnored) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r","recover":true})");
  text(a, R"({"op":"leave","room":"r"})");
  EXPECT_EQ(broker().calls, (std::vector<std::string>{"subscribe r", "unsubscribe r"}));
  broker().answer_history(found(outcome::current, 5));
  EXPECT_TRUE(received(1).empty());
  EXPECT_EQ(app_.room_count(), 0u);
}

TEST_F(RoomsRecovery, ASecondRequestReplacesTheFirst) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r"})");
  text(a, R"({"op":"join","room":"r","since":{"epoch":"e1","offset":1}})");
  text(a, R"({"op":"join","room":"r","since":{"epoch":"e1","offset":2}})");
  EXPECT_EQ(app_.local_members("r"), 1u);
  broker().answer_history(found(outcome::recovered, 3, {2, 3}));  // the first: stale
  EXPECT_TRUE(received(1).empty());
  broker().answer_history(found(outcome::recovered, 3, {3}));
  const auto got = received(1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["offset"], 3);
  EXPECT_EQ(got[1]["recovered"], true);
  EXPECT_EQ(api_.kept.size(), 1u) << "the room was kept once";
}

TEST_F(RoomsRecovery, HeldMessagesAreBoundedAndTheirOverflowEndsTheWait) {
  auto a = make_connection(1);
  text(a, R"({"op":"join","room":"r","recover":true})");
  for (std::uint64_t n = 1; n <= rooms_app::max_held_messages + 1; ++n) live(n);
  const auto got = received(1);
  ASSERT_EQ(got.size(), rooms_app::max_held_messages + 2);
  EXPECT_NE(got[0]["reason"].get<std::string>().find("unavailable"), std::string::npos);
  EXPECT_EQ(got.back()["offset"], rooms_app::max_held_messages + 1);
  broker().answer_history(found(outcome::current, 1));  // late: ignored
  EXPECT_EQ(received(1).size(), got.size());
  live(99999);
  EXPECT_EQ(received(1).size(), got.size() + 1) << "a live member now";
}

}  // namespace
