// Channel naming per mode, room keys in the channel's hash slot whatever
// the room name holds, gap counting by offsets, and --redis-cluster seeds.
#include "worker/broker/room_channel.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "worker/broker/cluster_slots.hpp"
#include "worker/broker/hash_tag.hpp"
#include "worker/broker/history_scripts.hpp"
#include "worker/broker/presence_scripts.hpp"
#include "worker/broker/redis_script.hpp"
#include "worker/broker/redis_url.hpp"
#include "worker/broker/room_tops.hpp"

namespace {

using namespace fg::worker;

TEST(RoomChannel, PlainAndShardedNames) {
  const room_channel plain("fg:", false), sharded("fg:", true);
  EXPECT_EQ(plain.of("lobby"), "fg:room:lobby");
  EXPECT_EQ(sharded.of("lobby"), "fg:{room:lobby}");
  EXPECT_EQ(plain.room_of("fg:room:lobby"), "lobby");
  EXPECT_EQ(sharded.room_of("fg:{room:lobby}"), "lobby");
  EXPECT_EQ(sharded.room_of("fg:{room:a}b}"), "a}b");
  EXPECT_EQ(sharded.room_of("fg:{room:}"), "");
  EXPECT_EQ(plain.room_of("fg:{room:lobby}"), std::nullopt);
  EXPECT_EQ(sharded.room_of("fg:room:lobby"), std::nullopt);
  EXPECT_EQ(sharded.room_of("fg:{room:lobby"), std::nullopt);
  EXPECT_EQ(sharded.room_of("other:{room:lobby}"), std::nullopt);
}

TEST(RoomChannel, EveryKeyOfAShardedRoomSharesItsChannelsSlot) {
  const room_channel sharded("framegate:", true);
  for (const std::string room : {"lobby", "a{b}", "}", "{", "{}", "x}y{z}", "{{}}", "", "é{ü}"}) {
    const std::string ch = sharded.of(room);
    EXPECT_EQ(sharded.room_of(ch), room);
    const auto slot = key_hash_slot(ch);
    for (const std::string& key :
         {history_meta_key(ch), history_stream_key(ch), presence_key(ch), presence_deadlines_key(ch)})
      EXPECT_EQ(key_hash_slot(key), slot) << "room " << room << ", key " << key;
  }
}

TEST(RoomChannel, PlainChannelsKeepTheirKeyNames) {
  // One Redis: the keys existing deployments already hold.
  EXPECT_EQ(history_meta_key("framegate:room:lobby"), "{framegate:room:lobby}:m");
  EXPECT_EQ(presence_key("framegate:room:lobby"), "{framegate:room:lobby}:p");
}

TEST(HashTag, FollowsRedisRule) {
  EXPECT_EQ(hashed_part("foo"), "foo");
  EXPECT_EQ(hashed_part("{user}.a"), "user");
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");
  EXPECT_FALSE(has_hash_tag("foo{"));
  EXPECT_TRUE(has_hash_tag("a{b}"));
}

TEST(HistoryScripts, ShardedVariantSpublishes) {
  EXPECT_NE(history_publish_script(true).sha1, history_publish_script(false).sha1);
  EXPECT_NE(history_publish_script(true).body.find("'SPUBLISH'"), std::string_view::npos);
  EXPECT_EQ(history_publish_script(false).body.find("SPUBLISH"), std::string_view::npos);
}

TEST(RoomTops, CountsSkippedOffsetsWithinAnEpoch) {
  room_tops t;
  EXPECT_EQ(t.note("r", {"e1", 5}), 0u);  // first seen: nothing known before
  EXPECT_EQ(t.note("r", {"e1", 6}), 0u);
  EXPECT_EQ(t.note("r", {"e1", 9}), 2u);  // 7 and 8 never came
  EXPECT_EQ(t.note("r", {"e1", 8}), 0u);  // late (a recovery), not a gap
  EXPECT_EQ(t.note("r", {"e2", 3}), 0u);  // a new epoch starts over
  EXPECT_EQ(t.note("r", {"e2", 5}), 1u);
  EXPECT_EQ(t.note("r", {{}, 0}), 0u);  // unnumbered
  EXPECT_EQ(t.kept(4), 4u);
  t.forget("r");
  EXPECT_EQ(t.note("r", {"e2", 9}), 0u);
  EXPECT_EQ(t.kept(100), 9u);
}

TEST(RoomTops, SaysWhereARoomStandsAndWhatIsNew) {
  room_tops t;
  EXPECT_FALSE(t.since("r"));
  EXPECT_TRUE(t.is_new("r", {"e1", 1})) << "nothing delivered yet";
  t.note("r", {"e1", 5});
  const auto since = t.since("r");
  ASSERT_TRUE(since);
  EXPECT_EQ(since->epoch, "e1");
  EXPECT_EQ(since->offset, 5u);
  EXPECT_FALSE(t.is_new("r", {"e1", 5}));
  EXPECT_FALSE(t.is_new("r", {"e1", 4}));
  EXPECT_TRUE(t.is_new("r", {"e1", 6}));
  EXPECT_TRUE(t.is_new("r", {"e2", 1})) << "another epoch";
  EXPECT_TRUE(t.is_new("r", {{}, 0})) << "unnumbered";
  EXPECT_TRUE(t.is_new("other", {"e1", 1}));
}

TEST(ClusterSeeds, ListsAndUrls) {
  const auto seeds = parse_cluster_seeds("10.0.0.1:7000, redis://app@10.0.0.2:7001", std::string("pw"));
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_EQ(seeds[0].host, "10.0.0.1");
  EXPECT_EQ(seeds[0].port, 7000);
  EXPECT_EQ(seeds[0].password, "pw");
  EXPECT_EQ(seeds[1].user, "app");
  EXPECT_EQ(seeds[1].port, 7001);
  EXPECT_EQ(parse_cluster_seeds("h:1", std::nullopt)[0].password, "");
}

TEST(ClusterSeeds, Refusals) {
  for (const char* bad : {"", "a:1,,b:2", "unix:///tmp/r.sock", "redis://h:1/2", "h:notaport"})
    EXPECT_THROW(parse_cluster_seeds(bad, std::nullopt), std::invalid_argument) << bad;
}

}  // namespace
