// The link's write batch: what is queued during a turn leaves in one
// write, never two writes at once, and nothing queued during a write is
// lost or sent twice.
#include "common/link/write_batch.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/link/codec.hpp"
#include "framegate/link.pb.h"

namespace {

using fg::byte_buffer;
using fg::link::write_batch;

void queue(write_batch& b, std::string_view bytes) { b.next_envelope().append(bytes.data(), bytes.size()); }

std::string text(std::span<const std::uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

TEST(WriteBatch, NothingQueuedIsNothingToWrite) {
  write_batch b;
  EXPECT_TRUE(b.begin_write().empty());
  EXPECT_FALSE(b.writing());
  EXPECT_EQ(b.pending_bytes(), 0u);
}

TEST(WriteBatch, EverythingQueuedLeavesInOneWrite) {
  write_batch b;
  queue(b, "one.");
  queue(b, "two.");
  queue(b, "three.");
  EXPECT_EQ(b.queued_envelopes(), 3u);
  EXPECT_EQ(b.queued_bytes(), 14u);

  EXPECT_EQ(text(b.begin_write()), "one.two.three.");
  EXPECT_TRUE(b.writing());
  EXPECT_EQ(b.queued_envelopes(), 0u);
  EXPECT_EQ(b.queued_bytes(), 0u);
  EXPECT_EQ(b.pending_bytes(), 14u);  // still in flight

  b.complete_write();
  EXPECT_FALSE(b.writing());
  EXPECT_EQ(b.pending_bytes(), 0u);
  EXPECT_TRUE(b.begin_write().empty());  // nothing is written twice
}

TEST(WriteBatch, OneWriteInFlightAtATime) {
  write_batch b;
  queue(b, "first");
  const auto first = b.begin_write();
  queue(b, "second");

  EXPECT_TRUE(b.begin_write().empty());
  // The write in flight is untouched by what was queued after it began.
  EXPECT_EQ(text(first), "first");
  EXPECT_EQ(b.queued_envelopes(), 1u);
  EXPECT_EQ(b.pending_bytes(), 11u);

  b.complete_write();
  EXPECT_EQ(text(b.begin_write()), "second");
  b.complete_write();
  EXPECT_EQ(b.pending_bytes(), 0u);
}

TEST(WriteBatch, TheBytesInFlightStayPutWhileTheNextBatchGrows) {
  write_batch b;
  queue(b, "in flight");
  const auto in_flight = b.begin_write();
  const std::string big(1 << 20, 'x');  // forces the queued buffer to reallocate
  queue(b, big);
  EXPECT_EQ(text(in_flight), "in flight");
  b.complete_write();
  EXPECT_EQ(b.begin_write().size(), big.size());
}

TEST(WriteBatch, ClearDropsTheQueuedBatchAndTheWriteInFlight) {
  write_batch b;
  queue(b, "sent");
  (void)b.begin_write();
  queue(b, "queued");

  b.clear();
  EXPECT_FALSE(b.writing());
  EXPECT_EQ(b.queued_envelopes(), 0u);
  EXPECT_EQ(b.pending_bytes(), 0u);
  EXPECT_TRUE(b.begin_write().empty());

  // Usable again at once (a link that reconnects).
  queue(b, "after");
  EXPECT_EQ(text(b.begin_write()), "after");
}

// The gateway's ledger keeps written blocks for replay: a block held
// elsewhere keeps its bytes however many batches follow.
TEST(WriteBatch, ABlockHeldElsewhereIsNotReused) {
  write_batch b;
  queue(b, "kept for replay");
  const write_batch::block held = b.queued_block();
  (void)b.begin_write();
  b.complete_write();
  for (int i = 0; i < 20; ++i) {
    queue(b, "later batch " + std::to_string(i));
    EXPECT_NE(b.queued_block(), held);
    (void)b.begin_write();
    b.complete_write();
  }
  EXPECT_EQ(text(held->span()), "kept for replay");
}

// Once nobody holds it, a written block serves again: no allocation per batch.
TEST(WriteBatch, AWrittenBlockNobodyHoldsServesAgain) {
  write_batch b;
  queue(b, "first");
  const byte_buffer* first = b.queued_block().get();
  write_batch::block held = b.queued_block();
  (void)b.begin_write();  // the next batch goes to a new block
  b.complete_write();
  queue(b, "second");
  (void)b.begin_write();
  EXPECT_NE(b.queued_block().get(), first) << "reused while held";
  b.complete_write();
  held.reset();
  queue(b, "third");
  EXPECT_EQ(text(b.begin_write()), "third");
  EXPECT_EQ(b.queued_block().get(), first) << "not reused once free";
  EXPECT_TRUE(b.queued_block()->empty());
  b.complete_write();
}

// A burst's big block is not kept: the link would hold its memory for good.
TEST(WriteBatch, ABlockOverTheKeptBudgetIsLetGo) {
  write_batch b;
  queue(b, std::string(write_batch::kKeptBytes + 1, 'b'));
  (void)b.begin_write();
  b.complete_write();
  queue(b, "small");
  (void)b.begin_write();  // the next batch's block: a kept one if any
  EXPECT_LT(b.queued_block()->capacity(), write_batch::kKeptBytes) << "the burst's block was kept";
  b.complete_write();
}

TEST(WriteBatch, ClearLeavesTheBytesOfAHeldBlockAlone) {
  write_batch b;
  queue(b, "queued");
  const write_batch::block held = b.queued_block();
  b.clear();
  EXPECT_EQ(text(held->span()), "queued");
  queue(b, "after");
  EXPECT_EQ(text(b.begin_write()), "after");
  EXPECT_EQ(text(held->span()), "queued");
}

TEST(WriteBatch, CarriesEncodedEnvelopesThatDecodeInOrder) {
  write_batch b;
  for (std::uint64_t nonce = 1; nonce <= 3; ++nonce) {
    framegate::link::Envelope e;
    e.mutable_ping()->set_nonce(nonce);
    fg::link::encode(e, b.next_envelope());
  }
  const auto bytes = b.begin_write();
  std::uint64_t expected = 1;
  fg::link::decoder d;
  const auto err = d.feed(bytes, [&](const framegate::link::Envelope& e) {
    ASSERT_TRUE(e.has_ping());
    EXPECT_EQ(e.ping().nonce(), expected++);
  });
  EXPECT_EQ(err, fg::link::decode_error::none);
  EXPECT_EQ(expected, 4u);
}

}  // namespace
