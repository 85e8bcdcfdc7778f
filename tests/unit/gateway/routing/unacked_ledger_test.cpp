// The ledger of unacknowledged messages, fed the way worker_link feeds it:
// each payload encoded into a real link write batch, which is written now
// and then, and recorded where it landed.
#include "gateway/routing/unacked_ledger.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "common/link/message_encoder.hpp"
#include "common/link/write_batch.hpp"

namespace fg::gateway {
namespace {

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

using row = std::tuple<std::uint64_t, bool, std::string>;

struct forwarding {
  link::write_batch batch;
  unacked_ledger l;

  std::uint64_t send(std::uint64_t conn, bool binary, const std::string& payload) {
    const std::size_t at = link::encode_message(batch.next_envelope(), conn, binary, bytes(payload), l.next_seq());
    return l.record(conn, binary, payload.size(), stored_payload{batch.queued_block(), at});
  }
  // The turn ends: the batch is written, and the next one goes to another block.
  void write() {
    (void)batch.begin_write();
    batch.complete_write();
  }
  [[nodiscard]] std::vector<row> contents() const {
    std::vector<row> out;
    l.for_each([&](std::uint64_t conn, bool binary, std::span<const std::uint8_t> p) {
      out.emplace_back(conn, binary, std::string(p.begin(), p.end()));
    });
    return out;
  }
};

TEST(unacked_ledger, numbers_messages_from_one_and_keeps_them_in_order) {
  forwarding f;
  EXPECT_EQ(f.l.next_seq(), 1u);
  EXPECT_EQ(f.send(7, false, "a"), 1u);
  EXPECT_EQ(f.send(8, true, "bb"), 2u);
  EXPECT_EQ(f.l.last_seq(), 2u);
  EXPECT_EQ(f.l.next_seq(), 3u);
  EXPECT_EQ(f.l.count(), 2u);
  EXPECT_EQ(f.l.bytes(), 3u);
  EXPECT_EQ(f.contents(), (std::vector<row>{{7, false, "a"}, {8, true, "bb"}}));
}

TEST(unacked_ledger, an_ack_covers_everything_up_to_its_seq) {
  forwarding f;
  for (int i = 0; i < 5; ++i) f.send(1, false, "x" + std::to_string(i));
  EXPECT_FALSE(f.l.acked(1));
  f.l.acknowledge(3);
  EXPECT_TRUE(f.l.acked(3));
  EXPECT_FALSE(f.l.acked(4));
  EXPECT_EQ(f.l.count(), 2u);
  EXPECT_EQ(f.l.bytes(), 4u);
  f.l.acknowledge(2);  // an old ack changes nothing
  EXPECT_EQ(f.l.count(), 2u);
  f.l.acknowledge(99);  // beyond the last: everything
  EXPECT_EQ(f.l.count(), 0u);
  EXPECT_EQ(f.l.bytes(), 0u);
  EXPECT_TRUE(f.l.acked(5));
  EXPECT_EQ(f.send(1, false, "next"), 6u);  // numbering goes on
}

TEST(unacked_ledger, within_judges_count_and_bytes) {
  forwarding f;
  EXPECT_TRUE(f.l.within(2, 10));
  f.send(1, false, "12345");
  EXPECT_TRUE(f.l.within(2, 10));
  f.send(1, false, "12345");
  EXPECT_FALSE(f.l.within(2, 100));  // count
  EXPECT_FALSE(f.l.within(5, 10));   // bytes
  f.l.acknowledge(1);
  EXPECT_TRUE(f.l.within(2, 10));
}

// The payloads are the link's own bytes: they must survive the batch's
// writes and its reuse of blocks, and one block growing under them.
TEST(unacked_ledger, payloads_stay_intact_while_the_link_writes_and_reuses_blocks) {
  forwarding f;
  std::deque<std::string> sent;
  std::uint64_t acked = 0;
  for (int i = 0; i < 400; ++i) {
    // One payload of 200 KiB makes its block grow (move) after others landed in it.
    std::string p(i == 150 ? 200 * 1024 : 1024, static_cast<char>('a' + i % 26));
    p += std::to_string(i);
    f.send(static_cast<std::uint64_t>(i), i % 2 == 0, p);
    sent.push_back(std::move(p));
    if (i % 7 == 6) f.write();
    if (i % 4 == 3) {  // a quarter acknowledged now and then: always some outstanding
      acked += 2;
      f.l.acknowledge(acked);
    }
  }
  const auto rows = f.contents();
  ASSERT_EQ(rows.size(), 400 - acked);
  std::size_t total = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(std::get<0>(rows[k]), acked + k);
    EXPECT_EQ(std::get<1>(rows[k]), (acked + k) % 2 == 0);
    ASSERT_EQ(std::get<2>(rows[k]), sent[acked + k]) << "message " << acked + k;
    total += sent[acked + k].size();
  }
  EXPECT_EQ(f.l.bytes(), total);
}

// Never fully acknowledged, at a steady pace: the ledger holds only the
// blocks of the outstanding messages, and none once all are acknowledged.
TEST(unacked_ledger, holds_only_the_blocks_of_outstanding_messages) {
  forwarding f;
  const std::string kib(1024, 'k');
  std::uint64_t acked = 0;
  for (int i = 0; i < 100000; ++i) {
    f.send(1, false, kib);
    if (i % 16 == 15) f.write();
    if (i >= 100) f.l.acknowledge(++acked);  // 100 outstanding
  }
  EXPECT_EQ(f.l.count(), 100u);
  EXPECT_LE(f.l.held_blocks(), 100u / 16 + 2);
  EXPECT_LE(f.l.held_bytes(), (100u / 16 + 2) * 32 * 1024);
  f.send(1, false, std::string(1 << 20, 'x'));
  EXPECT_GE(f.l.held_bytes(), 1u << 20);
  f.l.acknowledge(f.l.last_seq());
  EXPECT_EQ(f.l.count(), 0u);
  EXPECT_EQ(f.l.bytes(), 0u);
  EXPECT_EQ(f.l.held_blocks(), 0u);
  EXPECT_EQ(f.l.held_bytes(), 0u);
}

TEST(unacked_ledger, empty_payloads_are_kept_as_messages) {
  forwarding f;
  f.send(3, true, "");
  EXPECT_EQ(f.l.count(), 1u);
  EXPECT_EQ(f.l.bytes(), 0u);
  EXPECT_FALSE(f.l.within(1, 100));
  EXPECT_FALSE(f.l.acked(1));
  EXPECT_EQ(f.contents(), (std::vector<row>{{3, true, ""}}));
}

}  // namespace
}  // namespace fg::gateway
