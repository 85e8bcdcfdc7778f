// The pure parts of room history: the offset line Redis writes, what a
// history read means for a client's position, and the join ops' syntax.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "worker/apps/rooms_protocol.hpp"
#include "worker/broker/history_lookup.hpp"
#include "worker/broker/history_scripts.hpp"
#include "worker/broker/room_offset_header.hpp"

namespace {

using namespace fg::worker;
using outcome = room_history::outcome;

TEST(RoomOffsetHeader, ParsesEpochOffsetAndRest) {
  const auto h = parse_room_offset_header("fgo 0af3 42\nfg1 rest");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->epoch, "0af3");
  EXPECT_EQ(h->offset, 42u);
  EXPECT_EQ(h->rest, "fg1 rest");
  const auto top = parse_room_offset_header("fgo e 99999999999999\n");
  ASSERT_TRUE(top);
  EXPECT_EQ(top->offset, max_room_offset);
  EXPECT_EQ(top->rest, "");
}

TEST(RoomOffsetHeader, RefusesEverythingElse) {
  for (const std::string_view bad :
       {"", "fgo", "fgo ", "fgo e", "fgo e 1", "fgo e 1 \n", "fgo e 0\n", "fgo e 01\n", "fgo e -1\n", "fgo e 1x\n",
        "fgo  1\n", "fgo E 1\n", "fgo e\t1\n", "fgx e 1\n", "fgo e 100000000000000\n",
        "fgo 0123456789abcdef0123456789abcdefx 1\n", "fg1 0000000000000001 0000000000000001\n"})
    EXPECT_FALSE(parse_room_offset_header(bad)) << bad;
  EXPECT_TRUE(valid_room_epoch(std::string(max_room_epoch_bytes, 'a')));
  EXPECT_FALSE(valid_room_epoch(std::string(max_room_epoch_bytes + 1, 'a')));
}

TEST(HistoryScripts, KeysShareTheChannelsHashSlotAndEpochsAreFresh) {
  EXPECT_EQ(history_meta_key("framegate:room:lobby"), "{framegate:room:lobby}:m");
  EXPECT_EQ(history_stream_key("framegate:room:lobby"), "{framegate:room:lobby}:h");
  EXPECT_EQ(history_publish_script().sha1.size(), 40u);
  EXPECT_NE(history_publish_script().sha1, history_read_script().sha1);
  std::mt19937_64 rng(1);
  const std::string a = new_room_epoch(rng), b = new_room_epoch(rng);
  EXPECT_NE(a, b);
  EXPECT_TRUE(valid_room_epoch(a));
  EXPECT_EQ(a.size(), 16u);
}

history_read read_of(std::uint64_t top, std::vector<std::uint64_t> offsets, std::string epoch = "e") {
  history_read r;
  r.epoch = std::move(epoch);
  r.top = top;
  for (const auto n : offsets) r.entries.push_back({n, "p" + std::to_string(n)});
  return r;
}

TEST(JudgeHistory, EveryOutcome) {
  EXPECT_EQ(judge_history(std::nullopt, read_of(5, {})).result, outcome::current);
  const auto ok = judge_history(history_since{"e", 2}, read_of(5, {3, 4, 5}));
  EXPECT_EQ(ok.result, outcome::recovered);
  ASSERT_EQ(ok.entries.size(), 3u);
  EXPECT_EQ(ok.entries[2].payload, "p5");
  EXPECT_EQ(judge_history(history_since{"e", 5}, read_of(5, {})).result, outcome::recovered) << "nothing missed";
  EXPECT_EQ(judge_history(history_since{"e", 0}, read_of(0, {})).result, outcome::recovered);
  EXPECT_EQ(judge_history(history_since{"x", 2}, read_of(5, {3, 4, 5})).result, outcome::epoch_changed);
  EXPECT_EQ(judge_history(history_since{"e", 6}, read_of(5, {})).result, outcome::ahead);
  EXPECT_EQ(judge_history(history_since{"e", 1}, read_of(5, {3, 4, 5})).result, outcome::trimmed);
  EXPECT_EQ(judge_history(history_since{"e", 2}, read_of(5, {3, 5})).result, outcome::trimmed)
      << "an entry left out (forged) is a gap";
  EXPECT_EQ(judge_history(history_since{"e", 2}, read_of(5, {3, 4, 4})).result, outcome::trimmed);
  EXPECT_TRUE(judge_history(history_since{"e", 1}, read_of(5, {3, 4, 5})).entries.empty())
      << "entries only when recovered";
}

TEST(RoomsJoinSyntax, RecoverAndSince) {
  auto r = parse_rooms_request(R"({"op":"join","room":"r","recover":true})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_TRUE(r.request->recover);
  EXPECT_FALSE(r.request->since);
  r = parse_rooms_request(R"({"op":"join","room":"r","since":{"offset":12,"epoch":"ab"}})");
  ASSERT_TRUE(r.request) << r.error;
  ASSERT_TRUE(r.request->since);
  EXPECT_EQ(r.request->since->epoch, "ab");
  EXPECT_EQ(r.request->since->offset, 12u);
  EXPECT_TRUE(r.request->wants_position());
  r = parse_rooms_request(R"({"op":"join","room":"r","recover":false,"since":null})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_FALSE(r.request->wants_position()) << "a plain join, as before";
  r = parse_rooms_request(R"({"op":"publish","room":"r","data":1,"since":"ignored"})");
  EXPECT_TRUE(r.request) << "only join reads since";
}

TEST(RoomsJoinSyntax, BadPositionsAreNamed) {
  for (const std::string_view bad : {
           R"({"op":"join","room":"r","recover":1})",
           R"({"op":"join","room":"r","since":5})",
           R"({"op":"join","room":"r","since":{"epoch":"e"}})",
           R"({"op":"join","room":"r","since":{"offset":1}})",
           R"({"op":"join","room":"r","since":{"epoch":1,"offset":1}})",
           R"({"op":"join","room":"r","since":{"epoch":"","offset":1}})",
           R"({"op":"join","room":"r","since":{"epoch":"e","offset":-1}})",
           R"({"op":"join","room":"r","since":{"epoch":"e","offset":1.5}})",
           R"({"op":"join","room":"r","since":{"epoch":"e","offset":1e3}})",
           R"({"op":"join","room":"r","since":{"epoch":"e","offset":"1"}})",
           R"({"op":"join","room":"r","since":{"epoch":"e","offset":1000000000000000}})",
       }) {
    const auto r = parse_rooms_request(bad);
    EXPECT_FALSE(r.request) << bad;
    EXPECT_FALSE(r.error.empty()) << bad;
  }
}

TEST(RoomsReplies, DeliveryAtAndJoinedAnswers) {
  EXPECT_EQ(rooms_delivery_at(rooms_delivery("r", "[1]"), 9), R"({"room":"r","data":[1],"offset":9})");
  room_history h;
  h.epoch = "e";
  h.top = 4;
  h.result = outcome::current;
  EXPECT_EQ(rooms_joined("r", h, false), R"({"joined":"r","epoch":"e","offset":4})");
  h.result = outcome::recovered;
  EXPECT_EQ(rooms_joined("r", h, true), R"({"joined":"r","epoch":"e","offset":4,"recovered":true})");
  h.result = outcome::trimmed;
  const auto j = nlohmann::json::parse(rooms_joined("r\"", h, true));
  EXPECT_EQ(j["joined"], "r\"");
  EXPECT_EQ(j["recovered"], false);
  EXPECT_TRUE(j["reason"].is_string());
  h.result = outcome::unavailable;
  h.error = "down";
  EXPECT_EQ(rooms_joined("r", h, true), R"({"joined":"r","recovered":false,"reason":"history unavailable: down"})");
  h.result = outcome::off;
  EXPECT_EQ(nlohmann::json::parse(rooms_joined("r", h, false)).count("recovered"), 0u);
}

}  // namespace
