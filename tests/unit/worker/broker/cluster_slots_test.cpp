// Redis Cluster's key slots, the slot map read from CLUSTER SHARDS and
// CLUSTER SLOTS (real replies of redis-server 7.0.15, and hand-made bad
// ones), and MOVED/ASK redirects.
#include "worker/broker/cluster_slots.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

#include "tests/unit/worker/broker/cluster_captures.hpp"

namespace {

using namespace fg::worker;
namespace captures = fg::test::cluster_captures;

// ---- replies, as hiredis reads them off the socket --------------------------

struct reply_deleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

reply_ptr read_reply(std::string_view bytes) {
  redisReader* reader = redisReaderCreate();
  void* reply = nullptr;
  const bool ok = redisReaderFeed(reader, bytes.data(), bytes.size()) == REDIS_OK &&
                  redisReaderGetReply(reader, &reply) == REDIS_OK && reply != nullptr;
  redisReaderFree(reader);
  EXPECT_TRUE(ok) << "not one whole RESP reply: " << bytes;
  return reply_ptr(static_cast<redisReply*>(reply));
}

std::string bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }
std::string integer(long long n) { return ":" + std::to_string(n) + "\r\n"; }
std::string array(std::initializer_list<std::string> items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& item : items) out += item;
  return out;
}
const std::string nil = "$-1\r\n";

// One CLUSTER SHARDS node as Redis 7.0 writes it.
std::string shards_node(std::uint16_t port, std::string_view role, std::string_view health,
                        std::string_view endpoint = "127.0.0.1", std::string_view ip = "127.0.0.1") {
  return array({bulk("id"), bulk("id" + std::to_string(port)), bulk("port"), integer(port), bulk("ip"), bulk(ip),
                bulk("endpoint"), bulk(endpoint), bulk("role"), bulk(role), bulk("replication-offset"), integer(42),
                bulk("health"), bulk(health)});
}
std::string shard(std::string slots, std::string nodes) {
  return array({bulk("slots"), std::move(slots), bulk("nodes"), std::move(nodes)});
}

slot_map_reply shards_of(std::string_view bytes) { return parse_cluster_shards(*read_reply(bytes)); }
slot_map_reply slots_of(std::string_view bytes) { return parse_cluster_slots(*read_reply(bytes)); }

void expect_one_line_error(const slot_map_reply& r, std::string_view prefix, std::string_view bytes) {
  EXPECT_FALSE(r.map) << bytes;
  EXPECT_TRUE(r.error.starts_with(prefix)) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
}

std::uint16_t primary_port(const slot_map& map, std::size_t slot) {
  const cluster_shard* s = map.owner(slot);
  return s != nullptr ? s->primary.port : 0;
}

// ---- hashing ---------------------------------------------------------------

TEST(ClusterSlots, Crc16IsXmodem) {
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the check value of CRC-16/XMODEM
  EXPECT_EQ(crc16_xmodem(""), 0);
  EXPECT_EQ(crc16_xmodem(std::string_view("\0", 1)), 0);
}

// Each slot as `CLUSTER KEYSLOT` gave it on redis-server 7.0.15.
TEST(ClusterSlots, KeySlotsAreThoseOfARealServer) {
  const struct {
    std::string_view key;
    std::uint16_t slot;
  } known[] = {
      {"123456789", 12739},
      {"foo", 12182},
      {"bar", 5061},
      {"{user1000}.following", 3443},
      {"{user1000}.followers", 3443},
      {"foo{}{bar}", 8363},     // "{}" is no tag: the whole key
      {"foo{{bar}}zap", 4015},  // the tag is "{bar"
      {"{bar", 4015},           //
      {"foo{bar}{zap}", 5061},  // the first tag only: "bar"
      {"", 0},
      {"{", 4092},
      {"}", 12090},
      {"{}", 15257},
      {"}{", 12793},
      {"{a}", 15495},
      {"a{b", 13340},
      {"framegate:room:lobby", 11395},
      {"{framegate:room:lobby}", 11395},
      {"framegate:{room}:lobby", 15960},
  };
  for (const auto& k : known) EXPECT_EQ(key_hash_slot(k.key), k.slot) << k.key;
}

// 1000 keys of 0-15 bytes drawn by a fixed LCG from an alphabet full of
// braces (with 0x00 and 0xFF), slotted by the same server: their slots,
// folded h = 31 h + slot (mod 2^64), gave 0x812f5cc29e64f82f.
TEST(ClusterSlots, ManyBraceHeavyKeysSlotLikeARealServer) {
  constexpr std::string_view alphabet("ab{}c{}x}{0123456789_:.\xff\x00", 25);
  std::uint32_t x = 12345;
  const auto next = [&x] { return x = (x * 1103515245u + 12345u) & 0x7fffffffu; };
  std::uint64_t fold = 0;
  std::vector<std::uint16_t> first;
  for (int i = 0; i < 1000; ++i) {
    std::string key;
    for (std::uint32_t n = next() % 16; n > 0; --n) key += alphabet[(next() >> 16) % alphabet.size()];
    const std::uint16_t slot = key_hash_slot(key);
    fold = fold * 31 + slot;
    if (first.size() < 5) first.push_back(slot);
  }
  EXPECT_EQ(first, (std::vector<std::uint16_t>{44, 8759, 1628, 7936, 12257}));
  EXPECT_EQ(fold, 0x812f5cc29e64f82fu);
}

// ---- the captured cluster --------------------------------------------------

TEST(ClusterSlots, AHealthyClusterFromClusterShards) {
  const auto r = shards_of(captures::resp(captures::healthy_shards));
  ASSERT_TRUE(r.map) << r.error;
  const slot_map& map = *r.map;
  EXPECT_TRUE(map.complete());
  EXPECT_EQ(map.shards().size(), 3u);
  const cluster_shard* first = map.owner(0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->primary, (cluster_node{"127.0.0.1", 32328, "3f25024dfb517ff032c9a200bc41bf6775fcb9b4"}));
  EXPECT_EQ(first->replicas,
            (std::vector<cluster_node>{{"127.0.0.1", 32333, "1cb1699c3844460652a3453f9dfd3ab40afbb67e"}}));
  EXPECT_EQ(map.owner(5460), first);
  EXPECT_EQ(primary_port(map, 5461), 32329);
  EXPECT_EQ(primary_port(map, 10922), 32329);
  EXPECT_EQ(primary_port(map, 10923), 32330);
  EXPECT_EQ(primary_port(map, 16383), 32330);
  EXPECT_EQ(map.owner(16384), nullptr);
  ASSERT_NE(map.owner_of_key("foo"), nullptr);  // slot 12182
  EXPECT_EQ(map.owner_of_key("foo")->primary.port, 32330);
}

TEST(ClusterSlots, ClusterSlotsOfTheSameClusterGivesTheSameOwners) {
  const auto shards = shards_of(captures::resp(captures::healthy_shards));
  const auto slots = slots_of(captures::resp(captures::healthy_slots));
  ASSERT_TRUE(shards.map) << shards.error;
  ASSERT_TRUE(slots.map) << slots.error;
  EXPECT_TRUE(slots.map->complete());
  EXPECT_TRUE(moved_slots(*shards.map, *slots.map).empty());
  for (std::size_t slot = 0; slot < cluster_slot_count; slot += 97)
    EXPECT_EQ(*shards.map->owner(slot), *slots.map->owner(slot)) << "slot " << slot << ": ids and replicas too";
}

TEST(ClusterSlots, FailedPrimariesAreSkippedAndTheirSlotsUnassigned) {
  const auto r = shards_of(captures::resp(captures::degraded_shards));
  ASSERT_TRUE(r.map) << r.error;
  const slot_map& map = *r.map;
  EXPECT_FALSE(map.complete());
  EXPECT_EQ(map.assigned_slots(), cluster_slot_count - 5461);
  EXPECT_EQ(map.unclaimed_slots(), 0u) << "a failed shard's slots are still claimed";
  EXPECT_EQ(map.owner(0), nullptr) << "primary 32328 and its replica failed";
  EXPECT_EQ(map.owner(5460), nullptr);
  // The promoted replica, without the failed old primary (a slotless shard).
  ASSERT_NE(map.owner(5461), nullptr);
  EXPECT_EQ(map.owner(5461)->primary.port, 32331);
  EXPECT_TRUE(map.owner(5461)->replicas.empty());
  // The node with a hostname keeps its endpoint (the ip, by default).
  ASSERT_NE(map.owner(10923), nullptr);
  EXPECT_EQ(map.owner(10923)->primary, (cluster_node{"127.0.0.1", 32330, "af6bd067580d561d37e8e2fbb2c74045b3d62491"}));
  EXPECT_EQ(map.owner(10923)->replicas.size(), 1u);
  EXPECT_EQ(map.shards().size(), 2u);
}

TEST(ClusterSlots, ClusterSlotsStillNamesAFailedPrimary) {
  const auto r = slots_of(captures::resp(captures::degraded_slots));
  ASSERT_TRUE(r.map) << r.error;
  EXPECT_TRUE(r.map->complete());
  EXPECT_EQ(primary_port(*r.map, 0), 32328);
  EXPECT_TRUE(r.map->owner(0)->replicas.empty()) << "its failed replica is left out";
  EXPECT_EQ(primary_port(*r.map, 5461), 32331);
}

TEST(ClusterSlots, MovedSlotsAreThoseWhosePrimaryChangedOrWentAway) {
  const auto before = shards_of(captures::resp(captures::healthy_shards));
  const auto after = shards_of(captures::resp(captures::degraded_shards));
  ASSERT_TRUE(before.map && after.map);
  const std::vector<std::uint16_t> moved = moved_slots(*before.map, *after.map);
  ASSERT_EQ(moved.size(), 10923u);  // 0-5460 lost their owner, 5461-10922 went to 32331
  EXPECT_EQ(moved.front(), 0);
  EXPECT_EQ(moved.back(), 10922);
  EXPECT_FALSE(before.map->same_owner(*after.map, 5461));
  EXPECT_TRUE(before.map->same_owner(*after.map, 10923));
  EXPECT_EQ(moved_slots(*after.map, *before.map), moved);
}

// ---- hand-made maps and replies --------------------------------------------

TEST(ClusterSlots, OnlyThePrimaryAddressDecidesWhetherASlotMoved) {
  slot_map a, b;
  ASSERT_TRUE(a.assign(0, 0, a.add_shard({{"10.0.0.1", 7000, "x"}, {}})));
  ASSERT_TRUE(a.assign(1, 1, a.add_shard({{"10.0.0.2", 7000, "y"}, {}})));
  ASSERT_TRUE(b.assign(0, 0, b.add_shard({{"10.0.0.1", 7000, "other id"}, {{"10.0.0.9", 7000, "r"}}})));
  ASSERT_TRUE(b.assign(1, 1, b.add_shard({{"10.0.0.2", 7001, "y"}, {}})));
  ASSERT_TRUE(b.assign(2, 2, 0));
  EXPECT_TRUE(a.same_owner(b, 0));
  EXPECT_FALSE(a.same_owner(b, 1)) << "another port";
  EXPECT_FALSE(a.same_owner(b, 2)) << "assigned in one only";
  EXPECT_TRUE(a.same_owner(b, 3)) << "unassigned in both";
  EXPECT_EQ(moved_slots(a, b), (std::vector<std::uint16_t>{1, 2}));
}

TEST(ClusterSlots, AssignRefusesBadRangesAndSecondOwnersWholesale) {
  slot_map map;
  EXPECT_FALSE(map.assign(0, 0, 0)) << "no shard yet";
  const std::size_t s = map.add_shard({{"h", 1, ""}, {}});
  EXPECT_FALSE(map.assign(5, 4, s));
  EXPECT_FALSE(map.assign(0, cluster_slot_count, s));
  EXPECT_TRUE(map.assign(10, 20, s));
  EXPECT_FALSE(map.assign(0, 10, s)) << "slot 10 is taken";
  EXPECT_EQ(map.owner(0), nullptr) << "nothing of a refused range is assigned";
  EXPECT_EQ(map.assigned_slots(), 11u);
  EXPECT_TRUE(map.assign(0, 9, s));
  EXPECT_TRUE(map.assign(21, cluster_slot_count - 1, s));
  EXPECT_TRUE(map.complete());
}

TEST(ClusterSlots, PartialCoverageIsAValidButIncompleteMap) {
  const auto r =
      shards_of(array({shard(array({integer(0), integer(100)}), array({shards_node(7000, "master", "online")}))}));
  ASSERT_TRUE(r.map) << r.error;
  EXPECT_FALSE(r.map->complete());
  EXPECT_EQ(r.map->assigned_slots(), 101u);
  EXPECT_EQ(r.map->unclaimed_slots(), cluster_slot_count - 101);
  EXPECT_EQ(primary_port(*r.map, 100), 7000);
  EXPECT_EQ(r.map->owner(101), nullptr);

  const auto empty = shards_of(array({}));
  ASSERT_TRUE(empty.map) << empty.error;
  EXPECT_TRUE(empty.map->shards().empty());
  EXPECT_FALSE(empty.map->complete());
  EXPECT_EQ(empty.map->unclaimed_slots(), cluster_slot_count);
}

TEST(ClusterSlots, ShardNodesPickTheirHostAndHealth) {
  const auto r = shards_of(array({
      shard(array({integer(0), integer(0)}), array({shards_node(7000, "master", "online", "?", "10.0.0.1")})),
      shard(array({integer(1), integer(1)}), array({shards_node(7001, "master", "online", "", "10.0.0.2")})),
      shard(array({integer(2), integer(2)}), array({shards_node(7002, "master", "online", "redis-c.local")})),
      shard(array({integer(3), integer(3)}),
            array({shards_node(7003, "master", "loading"), shards_node(7004, "replica", "online")})),
      shard(array({integer(4), integer(4), integer(6), integer(7)}),
            array({shards_node(7005, "replica", "fail"), shards_node(7006, "replica", "loading"),
                   shards_node(7007, "master", "online"), shards_node(7008, "replica", "online")})),
  }));
  ASSERT_TRUE(r.map) << r.error;
  const slot_map& map = *r.map;
  EXPECT_EQ(map.owner(0)->primary.host, "10.0.0.1") << "endpoint \"?\": the ip";
  EXPECT_EQ(map.owner(1)->primary.host, "10.0.0.2") << "empty endpoint: the ip";
  EXPECT_EQ(map.owner(2)->primary.host, "redis-c.local");
  EXPECT_EQ(map.owner(3), nullptr) << "a loading primary serves nothing";
  ASSERT_NE(map.owner(4), nullptr);
  EXPECT_EQ(map.owner(4)->primary.port, 7007);
  EXPECT_EQ(map.owner(4)->replicas, (std::vector<cluster_node>{{"127.0.0.1", 7008, "id7008"}}));
  EXPECT_EQ(map.owner(5), nullptr);
  EXPECT_EQ(map.owner(7), map.owner(4));
}

TEST(ClusterSlots, UnknownFieldsAreIgnored) {
  const auto r = shards_of(array({array(
      {bulk("future"), array({nil}), bulk("slots"), array({integer(9), integer(9)}), bulk("nodes"),
       array({array({bulk("port"), integer(7000), bulk("tls-port"), integer(0), bulk("ip"), bulk("10.0.0.1"),
                     bulk("shiny"), integer(1), bulk("role"), bulk("master"), bulk("health"), bulk("online")})})})}));
  ASSERT_TRUE(r.map) << r.error;
  EXPECT_EQ(r.map->owner(9)->primary, (cluster_node{"10.0.0.1", 7000, ""}));
}

TEST(ClusterSlots, ClusterSlotsMergesRangesOfOnePrimaryAndReadsOddEndpoints) {
  const std::string a = array({bulk("10.0.0.1"), integer(7000), bulk("ida")});
  const auto r = slots_of(array({
      array({integer(0), integer(9), a, array({bulk("10.0.0.4"), integer(7003), bulk("idr"), array({})})}),
      array({integer(20), integer(29), array({nil, integer(7001), bulk("idb")})}),
      array({integer(30), integer(39), a}),
      array({integer(40), integer(49),
             array({bulk("?"), integer(7002), bulk("idc"), array({bulk("ip"), bulk("10.0.0.3")})})}),
      array({integer(50), integer(59), array({bulk(""), integer(7004)})}),
  }));
  ASSERT_TRUE(r.map) << r.error;
  const slot_map& map = *r.map;
  EXPECT_EQ(map.shards().size(), 4u);
  EXPECT_EQ(map.owner(39), map.owner(0)) << "one shard for both ranges of 10.0.0.1:7000";
  EXPECT_EQ(map.owner(0)->replicas.size(), 1u);
  EXPECT_EQ(map.owner(20)->primary, (cluster_node{"", 7001, "idb"})) << "NULL endpoint: the host asked";
  EXPECT_EQ(map.owner(40)->primary.host, "10.0.0.3") << "\"?\": the metadata's ip";
  EXPECT_EQ(map.owner(50)->primary, (cluster_node{"", 7004, ""}));
  EXPECT_EQ(map.owner(10), nullptr);
}

TEST(ClusterSlots, MalformedShardsRepliesGiveOneLineErrors) {
  const std::string node = shards_node(7000, "master", "online");
  const std::string ok_slots = array({integer(0), integer(1)});
  const std::string bad[] = {
      integer(1),
      bulk("slots"),
      "-ERR This instance has cluster support disabled\r\n",
      array({integer(1)}),
      array({array({bulk("slots"), ok_slots, bulk("nodes")})}),  // odd map
      array({array({bulk("slots"), ok_slots})}),                 // no nodes
      array({array({bulk("nodes"), array({node})})}),            // no slots
      array({array({integer(1), ok_slots, bulk("nodes"), array({node})})}),
      array({shard(array({integer(0)}), array({node}))}),
      array({shard(array({integer(0), integer(16384)}), array({node}))}),
      array({shard(array({integer(-1), integer(5)}), array({node}))}),
      array({shard(array({integer(5), integer(4)}), array({node}))}),
      array({shard(array({bulk("zero"), integer(4)}), array({node}))}),
      array({shard(array({array({}), integer(4)}), array({node}))}),
      array({shard(ok_slots, bulk("nodes"))}),
      array({shard(ok_slots, array({shards_node(0, "master", "online")}))}),
      array({shard(ok_slots, array({array({bulk("port"), integer(65536), bulk("role"), bulk("master")})}))}),
      array({shard(ok_slots, array({array({bulk("role"), bulk("master"), bulk("health"), bulk("online")})}))}),
      array({shard(ok_slots, array({array({bulk("port"), bulk("7x"), bulk("role"), bulk("master")})}))}),
      array({shard(ok_slots, array({array({bulk("port"), integer(1), bulk("ip"), integer(3)})}))}),
      array({shard(ok_slots, array({array({bulk("port"), integer(1), bulk("ip")})}))}),
      array({shard(ok_slots, array({integer(7)}))}),
      // A slot claimed twice, and a failed shard's slots still checked.
      array({shard(ok_slots, array({node})), shard(array({integer(1), integer(2)}), array({node}))}),
      array({shard(array({integer(0), integer(99999)}), array({shards_node(7000, "master", "fail")}))}),
  };
  for (const std::string& bytes : bad) expect_one_line_error(shards_of(bytes), "CLUSTER SHARDS: ", bytes);
}

TEST(ClusterSlots, MalformedSlotsRepliesGiveOneLineErrors) {
  const std::string node = array({bulk("10.0.0.1"), integer(7000), bulk("id")});
  const std::string bad[] = {
      nil,
      array({integer(0)}),
      array({array({integer(0), integer(1)})}),
      array({array({integer(0), integer(1), integer(7)})}),
      array({array({integer(0), integer(1), array({bulk("10.0.0.1")})})}),
      array({array({integer(0), integer(1), array({integer(1), integer(7000)})})}),
      array({array({integer(0), integer(1), array({bulk("h"), integer(0)})})}),
      array({array({integer(0), integer(1), array({bulk("h"), integer(65536)})})}),
      array({array({integer(0), integer(1), array({bulk("h"), integer(-7000)})})}),
      array({array({integer(0), integer(1), array({bulk("h"), integer(7000), integer(5)})})}),
      array({array({integer(0), integer(1), node, array({bulk("h")})})}),
      array({array({integer(0), integer(16384), node})}),
      array({array({integer(2), integer(1), node})}),
      array({array({nil, integer(1), node})}),
      array({array({integer(0), integer(5), node}), array({integer(5), integer(6), node})}),
  };
  for (const std::string& bytes : bad) expect_one_line_error(slots_of(bytes), "CLUSTER SLOTS: ", bytes);
}

// ---- redirects -------------------------------------------------------------

TEST(ClusterSlots, RedirectsNameTheSlotAndWhereItIs) {
  using kind = cluster_redirect::kind;
  EXPECT_EQ(parse_redirect("MOVED 3999 127.0.0.1:6381"), (cluster_redirect{kind::moved, 3999, "127.0.0.1", 6381}));
  EXPECT_EQ(parse_redirect("ASK 3999 127.0.0.1:6381"), (cluster_redirect{kind::ask, 3999, "127.0.0.1", 6381}));
  EXPECT_EQ(parse_redirect("MOVED 1 ::1:7000"), (cluster_redirect{kind::moved, 1, "::1", 7000})) << "the last ':'";
  EXPECT_EQ(parse_redirect("MOVED 16383 :7000"), (cluster_redirect{kind::moved, 16383, "", 7000}))
      << "no host: the one asked";
  EXPECT_EQ(parse_redirect("ASK 0 redis-a.example:65535"), (cluster_redirect{kind::ask, 0, "redis-a.example", 65535}));
}

TEST(ClusterSlots, AnythingElseIsNoRedirect) {
  const std::string_view not_redirects[] = {"",
                                            "MOVED",
                                            "MOVED ",
                                            "MOVED 1",
                                            "MOVED 1 ",
                                            "MOVED 1 h",
                                            "MOVED 1 h:",
                                            "MOVED 1 h:0",
                                            "MOVED 1 h:65536",
                                            "MOVED 1 h:+1",
                                            "MOVED 01 h:1",
                                            "MOVED 1 h:07000",
                                            "MOVED 1 h:-1",
                                            "MOVED 16384 h:1",
                                            "MOVED -1 h:1",
                                            "MOVED x h:1",
                                            "MOVED  1 h:1",
                                            "MOVED 1  h:1",
                                            "MOVED 1 h:1 ",
                                            "MOVED 1 h:1 extra",
                                            "moved 1 h:1",
                                            "ASK1 h:1",
                                            "-MOVED 1 h:1",
                                            "ERR unknown command",
                                            "CROSSSLOT Keys in request don't hash to the same slot",
                                            "TRYAGAIN"};
  for (const std::string_view text : not_redirects) EXPECT_FALSE(parse_redirect(text)) << text;
}

}  // namespace
