#include "gateway/routing/unacked_ledger.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <tuple>
#include <vector>

namespace fg::gateway {
namespace {

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::vector<std::tuple<std::uint64_t, bool, std::string>> contents(const unacked_ledger& l) {
  std::vector<std::tuple<std::uint64_t, bool, std::string>> out;
  l.for_each([&](std::uint64_t conn, bool binary, std::span<const std::uint8_t> p) {
    out.emplace_back(conn, binary, std::string(p.begin(), p.end()));
  });
  return out;
}

TEST(unacked_ledger, numbers_messages_from_one_and_keeps_them_in_order) {
  unacked_ledger l;
  EXPECT_EQ(l.record(7, false, bytes("a")), 1u);
  EXPECT_EQ(l.record(8, true, bytes("bb")), 2u);
  EXPECT_EQ(l.last_seq(), 2u);
  EXPECT_EQ(l.count(), 2u);
  EXPECT_EQ(l.bytes(), 3u);
  using row = std::tuple<std::uint64_t, bool, std::string>;
  EXPECT_EQ(contents(l), (std::vector<row>{{7, false, "a"}, {8, true, "bb"}}));
}

TEST(unacked_ledger, an_ack_covers_everything_up_to_its_seq) {
  unacked_ledger l;
  for (int i = 0; i < 5; ++i) l.record(1, false, bytes("x" + std::to_string(i)));
  EXPECT_FALSE(l.acked(1));
  l.acknowledge(3);
  EXPECT_TRUE(l.acked(3));
  EXPECT_FALSE(l.acked(4));
  EXPECT_EQ(l.count(), 2u);
  EXPECT_EQ(l.bytes(), 4u);
  l.acknowledge(2);  // an old ack changes nothing
  EXPECT_EQ(l.count(), 2u);
  l.acknowledge(99);  // beyond the last: everything
  EXPECT_EQ(l.count(), 0u);
  EXPECT_EQ(l.bytes(), 0u);
  EXPECT_TRUE(l.acked(5));
  EXPECT_EQ(l.record(1, false, bytes("next")), 6u);  // numbering goes on
}

TEST(unacked_ledger, within_judges_count_and_bytes) {
  unacked_ledger l;
  EXPECT_TRUE(l.within(2, 10));
  l.record(1, false, bytes("12345"));
  EXPECT_TRUE(l.within(2, 10));
  l.record(1, false, bytes("12345"));
  EXPECT_FALSE(l.within(2, 100));  // count
  EXPECT_FALSE(l.within(5, 10));   // bytes
  l.acknowledge(1);
  EXPECT_TRUE(l.within(2, 10));
}

TEST(unacked_ledger, payloads_survive_compaction_when_never_fully_acknowledged) {
  unacked_ledger l;
  std::uint64_t acked = 0;
  for (int i = 0; i < 1000; ++i) {
    l.record(static_cast<std::uint64_t>(i), i % 2 == 0, bytes("payload-" + std::to_string(i)));
    if (i % 3 == 2) l.acknowledge(++acked);  // always some left behind
  }
  const auto rows = contents(l);
  ASSERT_EQ(rows.size(), l.count());
  std::size_t total = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto i = static_cast<int>(acked + k);
    EXPECT_EQ(std::get<0>(rows[k]), static_cast<std::uint64_t>(i));
    EXPECT_EQ(std::get<1>(rows[k]), i % 2 == 0);
    EXPECT_EQ(std::get<2>(rows[k]), "payload-" + std::to_string(i));
    total += std::get<2>(rows[k]).size();
  }
  EXPECT_EQ(l.bytes(), total);
}

// 1 KiB payloads fill many segments, and one larger than a segment gets its
// own; views stay right while older segments are freed under them.
TEST(unacked_ledger, payloads_stay_intact_across_segments) {
  unacked_ledger l;
  std::deque<std::string> sent;
  std::uint64_t acked = 0;
  for (int i = 0; i < 400; ++i) {
    std::string p(i == 150 ? 200 * 1024 : 1024, static_cast<char>('a' + i % 26));
    p += std::to_string(i);
    l.record(static_cast<std::uint64_t>(i), false, bytes(p));
    sent.push_back(std::move(p));
    if (i % 4 == 3) {  // a quarter acknowledged now and then: always some outstanding
      acked += 2;
      l.acknowledge(acked);
    }
  }
  const auto rows = contents(l);
  ASSERT_EQ(rows.size(), 400 - acked);
  std::size_t total = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(std::get<0>(rows[k]), acked + k);
    ASSERT_EQ(std::get<2>(rows[k]), sent[acked + k]) << "message " << acked + k;
    total += sent[acked + k].size();
  }
  EXPECT_EQ(l.bytes(), total);
}

// Never fully acknowledged, at a steady pace: the memory held stays a few
// segments, and nothing is left of the large message once acknowledged.
TEST(unacked_ledger, holds_bounded_memory_under_steady_load) {
  unacked_ledger l;
  const std::string kib(1024, 'k');
  std::uint64_t acked = 0;
  for (int i = 0; i < 100000; ++i) {
    l.record(1, false, bytes(kib));
    if (i >= 100) l.acknowledge(++acked);  // 100 outstanding
  }
  EXPECT_EQ(l.count(), 100u);
  EXPECT_LE(l.held_bytes(), 4u * 64 * 1024);
  l.record(1, false, bytes(std::string(1 << 20, 'x')));
  EXPECT_GE(l.held_bytes(), 1u << 20);
  l.acknowledge(l.last_seq());
  EXPECT_EQ(l.count(), 0u);
  EXPECT_EQ(l.bytes(), 0u);
  EXPECT_LE(l.held_bytes(), 2u * 64 * 1024) << "the large message's segment is given back";
}

TEST(unacked_ledger, empty_payloads_are_kept_as_messages) {
  unacked_ledger l;
  l.record(3, true, {});
  EXPECT_EQ(l.count(), 1u);
  EXPECT_EQ(l.bytes(), 0u);
  EXPECT_FALSE(l.within(1, 100));
  EXPECT_FALSE(l.acked(1));
}

}  // namespace
}  // namespace fg::gateway
