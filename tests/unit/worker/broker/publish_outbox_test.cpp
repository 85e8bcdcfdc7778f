// The outbox alone: order, the bound (drop the oldest not yet written,
// never a written one), acknowledgements, and a lost connection.
#include "worker/broker/publish_outbox.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

using fg::worker::publish_outbox;
using fg::worker::publish_record;
using fg::worker::publish_record_ptr;

publish_record_ptr rec(std::uint64_t seq, std::string room = "R") {
  auto r = std::make_shared<publish_record>();
  r->seq = seq;
  r->room = std::move(room);
  return r;
}

std::vector<std::uint64_t> seqs(const std::vector<publish_record_ptr>& v) {
  std::vector<std::uint64_t> out;
  for (const auto& r : v) out.push_back(r->seq);
  return out;
}

std::vector<std::uint64_t> unwritten_seqs(const publish_outbox& o) {
  std::vector<std::uint64_t> out;
  for (const auto& r : o.unwritten_records()) out.push_back(r->seq);
  return out;
}

// Writes every unwritten one, as the broker does while flowing.
void write_all(publish_outbox& o) {
  while (o.has_unwritten()) o.mark_written(std::chrono::steady_clock::now());
}

TEST(PublishOutbox, KeepsOrderAndWritesOldestFirst) {
  publish_outbox o(10);
  for (std::uint64_t s = 1; s <= 3; ++s) EXPECT_TRUE(o.push(rec(s)).empty());
  EXPECT_EQ(o.size(), 3u);
  EXPECT_EQ(o.unwritten(), 3u);
  ASSERT_TRUE(o.has_unwritten());
  EXPECT_EQ(o.next_unwritten().seq, 1u);
  const auto t = std::chrono::steady_clock::now();
  o.mark_written(t);
  EXPECT_EQ(o.written(), 1u);
  EXPECT_EQ(o.next_unwritten().seq, 2u);
  EXPECT_EQ(unwritten_seqs(o), (std::vector<std::uint64_t>{2, 3}));
  const auto first = o.acknowledge();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->seq, 1u);
  EXPECT_EQ(first->written, t) << "the write time is kept for the round trip";
}

TEST(PublishOutbox, AnAcknowledgementWithNothingWrittenIsIgnored) {
  publish_outbox o(10);
  EXPECT_EQ(o.acknowledge(), nullptr) << "empty";
  o.push(rec(1));
  EXPECT_EQ(o.acknowledge(), nullptr) << "queued but not written: not what Redis answered";
  EXPECT_EQ(o.size(), 1u);
}

TEST(PublishOutbox, AcknowledgementsTakeTheWrittenInOrder) {
  publish_outbox o(10);
  for (std::uint64_t s = 1; s <= 4; ++s) o.push(rec(s));
  o.mark_written(std::chrono::steady_clock::now());
  o.mark_written(std::chrono::steady_clock::now());
  EXPECT_EQ(o.acknowledge()->seq, 1u);
  EXPECT_EQ(o.acknowledge()->seq, 2u);
  EXPECT_EQ(o.acknowledge(), nullptr) << "3 and 4 were never written";
  EXPECT_EQ(o.size(), 2u);
  EXPECT_EQ(o.written(), 0u);
  EXPECT_EQ(o.next_unwritten().seq, 3u);
}

TEST(PublishOutbox, BeyondTheBoundTheOldestUnwrittenIsDropped) {
  publish_outbox o(3);
  for (std::uint64_t s = 1; s <= 3; ++s) EXPECT_TRUE(o.push(rec(s)).empty());
  EXPECT_EQ(seqs(o.push(rec(4))), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(seqs(o.push(rec(5))), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(o.size(), 3u);
  EXPECT_EQ(unwritten_seqs(o), (std::vector<std::uint64_t>{3, 4, 5}));
}

TEST(PublishOutbox, WrittenOnesAreNeverDropped) {
  publish_outbox o(3);
  for (std::uint64_t s = 1; s <= 3; ++s) o.push(rec(s));
  o.mark_written(std::chrono::steady_clock::now());
  o.mark_written(std::chrono::steady_clock::now());
  // 1 and 2 may already be published: 3 is the oldest that can go.
  EXPECT_EQ(seqs(o.push(rec(4))), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(o.written(), 2u);
  EXPECT_EQ(o.acknowledge()->seq, 1u);
  EXPECT_EQ(o.acknowledge()->seq, 2u);
  EXPECT_EQ(unwritten_seqs(o), (std::vector<std::uint64_t>{4}));
}

TEST(PublishOutbox, AllWrittenBeyondTheBoundDropsTheNewcomer) {
  publish_outbox o(2);
  for (std::uint64_t s = 1; s <= 2; ++s) o.push(rec(s));
  write_all(o);
  // Everything older is written: the only unwritten one is the new one.
  EXPECT_EQ(seqs(o.push(rec(3))), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(o.size(), 2u);
}

TEST(PublishOutbox, ALostConnectionMakesTheWrittenOnesUnwrittenAgain) {
  publish_outbox o(10);
  for (std::uint64_t s = 1; s <= 3; ++s) o.push(rec(s));
  write_all(o);
  o.acknowledge();
  o.connection_lost();
  EXPECT_EQ(o.written(), 0u);
  EXPECT_EQ(unwritten_seqs(o), (std::vector<std::uint64_t>{2, 3})) << "sent again, in order";
  EXPECT_EQ(o.acknowledge(), nullptr) << "a late reply of the old connection matches nothing";
}

TEST(PublishOutbox, AfterALostConnectionTheOnceWrittenCanBeDropped) {
  publish_outbox o(2);
  for (std::uint64_t s = 1; s <= 2; ++s) o.push(rec(s));
  write_all(o);
  o.connection_lost();
  // 1 is unwritten again (it goes out again after the reconnect): the oldest to drop.
  EXPECT_EQ(seqs(o.push(rec(3))), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(unwritten_seqs(o), (std::vector<std::uint64_t>{2, 3}));
}

TEST(PublishOutbox, ABoundOfZeroKeepsOne) {
  publish_outbox o(0);
  EXPECT_EQ(o.bound(), 1u);
  EXPECT_TRUE(o.push(rec(1)).empty());
  EXPECT_EQ(seqs(o.push(rec(2))), (std::vector<std::uint64_t>{1}));
}

TEST(PublishOutbox, ClearCountsWhatWasNeverWritten) {
  publish_outbox o(10);
  for (std::uint64_t s = 1; s <= 5; ++s) o.push(rec(s));
  o.mark_written(std::chrono::steady_clock::now());
  o.mark_written(std::chrono::steady_clock::now());
  EXPECT_EQ(o.clear(), 3u);
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(o.written(), 0u);
  EXPECT_FALSE(o.has_unwritten());
  EXPECT_EQ(o.clear(), 0u);
}

TEST(PublishOutbox, TakeUnwrittenLeavesTheWrittenOnes) {
  publish_outbox o(10);
  for (std::uint64_t s = 1; s <= 4; ++s) (void)o.push(rec(s));
  const auto t0 = std::chrono::steady_clock::now();
  o.mark_written(t0);
  o.mark_written(t0 + std::chrono::seconds(1));
  EXPECT_EQ(seqs(o.take_unwritten()), (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(o.size(), 2u);
  EXPECT_FALSE(o.has_unwritten());
  EXPECT_EQ(o.acknowledge()->seq, 1u);  // the written ones are still answered in order
  EXPECT_TRUE(o.take_unwritten().empty());
}

TEST(PublishOutbox, OldestWrittenIsTheOneWaitingLongest) {
  publish_outbox o(10);
  EXPECT_EQ(o.oldest_written(), std::nullopt);
  (void)o.push(rec(1));
  (void)o.push(rec(2));
  EXPECT_EQ(o.oldest_written(), std::nullopt);  // nothing written yet
  const auto t0 = std::chrono::steady_clock::now();
  o.mark_written(t0);
  o.mark_written(t0 + std::chrono::seconds(2));
  EXPECT_EQ(o.oldest_written(), t0);
  (void)o.acknowledge();
  EXPECT_EQ(o.oldest_written(), t0 + std::chrono::seconds(2));
  o.connection_lost();
  EXPECT_EQ(o.oldest_written(), std::nullopt);
}

}  // namespace
