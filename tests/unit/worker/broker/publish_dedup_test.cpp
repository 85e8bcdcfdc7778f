// Exactly-once bookkeeping alone: the per-origin seq rule, publishes owed
// locally until their copy comes back, and copies of what was delivered
// locally being skipped.
#include "worker/broker/publish_dedup.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using fg::worker::publish_dedup;
using fg::worker::publish_record;
using fg::worker::publish_record_ptr;

publish_record_ptr rec(std::uint64_t seq) {
  auto r = std::make_shared<publish_record>();
  r->seq = seq;
  r->room = "R";
  return r;
}

std::vector<std::uint64_t> seqs(const std::vector<publish_record_ptr>& v) {
  std::vector<std::uint64_t> out;
  for (const auto& r : v) out.push_back(r->seq);
  return out;
}

// --------------------------------------------------------- the seq rule

TEST(PublishDedup, SkipsASeqAlreadyAcceptedFromTheSameOriginInTheSameRoom) {
  publish_dedup d(100);
  EXPECT_TRUE(d.accept(7, "R", 5)) << "a new origin starts anywhere";
  EXPECT_FALSE(d.accept(7, "R", 5)) << "the same copy again";
  EXPECT_TRUE(d.accept(7, "R", 6));
  EXPECT_TRUE(d.accept(7, "R", 10)) << "a gap is fine (publishes dropped or meant for other rooms)";
  EXPECT_FALSE(d.accept(7, "R", 6)) << "sent again after a reconnect";
  EXPECT_FALSE(d.accept(7, "R", 10));
  EXPECT_TRUE(d.accept(7, "R", 8)) << "never seen: not a copy (no high-water mark)";
  EXPECT_FALSE(d.accept(7, "R", 8));
}

TEST(PublishDedup, OriginsAndRoomsAreIndependent) {
  publish_dedup d(100);
  EXPECT_TRUE(d.accept(1, "R", 10));
  EXPECT_TRUE(d.accept(2, "R", 10));
  EXPECT_TRUE(d.accept(1, "S", 10));
  EXPECT_FALSE(d.accept(1, "R", 10));
  EXPECT_FALSE(d.accept(2, "R", 10));
  EXPECT_FALSE(d.accept(1, "S", 10));
  EXPECT_EQ(d.pairs(), 3u);
}

TEST(PublishDedup, ResentTailsWithinTheWindowAreAllSkipped) {
  publish_dedup d(100);
  const std::uint64_t n = publish_dedup::window;
  for (std::uint64_t s = 1; s <= n; ++s) EXPECT_TRUE(d.accept(3, "R", s));
  // The publisher reconnected and sends its unacknowledged tail again, then more.
  for (std::uint64_t s = 1; s <= n; ++s) EXPECT_FALSE(d.accept(3, "R", s)) << s;
  EXPECT_TRUE(d.accept(3, "R", n + 1));
  EXPECT_FALSE(d.accept(3, "R", n + 1));
  EXPECT_TRUE(d.accept(3, "R", 1)) << "out of the window: remembered no more";
}

// Issue #12: a forged `fg1 <origin> ffffffffffffffff` silenced the origin.
TEST(PublishDedup, AForgedSeqFarAheadDoesNotSilenceTheOrigin) {
  publish_dedup d(100);
  EXPECT_TRUE(d.accept(9, "R", 1));
  EXPECT_TRUE(d.accept(9, "R", ~std::uint64_t{0})) << "the forgery itself cannot be told apart";
  for (std::uint64_t s = 2; s <= 5000; ++s) ASSERT_TRUE(d.accept(9, "R", s)) << s;
  EXPECT_FALSE(d.accept(9, "R", 5000)) << "copies of the genuine stream are still skipped";
}

TEST(PublishDedup, EachForgedSeqCostsAtMostTheOneGenuineSeqItCopies) {
  // Every forged seq just ahead of the genuine stream, as an attacker who
  // reads the channel would pick them.
  publish_dedup d(100);
  std::uint64_t lost = 0, forged = 0;
  for (std::uint64_t s = 1; s <= 3000; ++s) {
    if (s % 3 == 0) {
      ++forged;
      d.accept(9, "R", s + 1);
      d.accept(9, "R", s + 100);
    }
    if (!d.accept(9, "R", s)) ++lost;
  }
  EXPECT_LE(lost, 2 * forged);
  EXPECT_GT(3000 - lost, 0u);
  // A flood of forgeries (a whole window of them) only makes the window forget.
  for (std::uint64_t f = 0; f < 2 * publish_dedup::window; ++f) d.accept(9, "R", (std::uint64_t{1} << 50) + f);
  for (std::uint64_t s = 3001; s <= 3100; ++s) EXPECT_TRUE(d.accept(9, "R", s)) << s;
}

TEST(PublishDedup, EveryForgedValueAgainstEveryGenuinePosition) {
  // Exhaustive over a small space: one forged seq f at any point of a
  // genuine stream 1..40 loses at most the genuine seq equal to f.
  for (std::uint64_t f = 0; f <= 45; ++f)
    for (std::uint64_t at = 0; at <= 40; ++at) {
      publish_dedup d(100);
      for (std::uint64_t s = 1; s <= 40; ++s) {
        if (s == at) d.accept(9, "R", f);
        const bool ok = d.accept(9, "R", s);
        const bool may_lose = s == f && at <= s && at != 0;
        if (!may_lose) {
          ASSERT_TRUE(ok) << "f=" << f << " at=" << at << " s=" << s;
        }
      }
    }
}

TEST(PublishDedup, AuthenticatedSeqsBelowAFullWindowAreReplays) {
  // With a MAC only cluster members write seqs: one below everything a full
  // window remembers is an old message played again, not a resent copy.
  publish_dedup d(100);
  const std::uint64_t n = publish_dedup::window;
  for (std::uint64_t s = 11; s < 11 + n; ++s) EXPECT_TRUE(d.accept(3, "R", s, true));
  EXPECT_FALSE(d.accept(3, "R", 10, true));
  EXPECT_FALSE(d.accept(3, "R", 11, true));
  EXPECT_TRUE(d.accept(3, "R", 11 + n, true));
  EXPECT_TRUE(d.accept(3, "R", 10, false)) << "unauthenticated: never judged by position";
  publish_dedup fresh(100);
  EXPECT_TRUE(fresh.accept(3, "R", 50, true));
  EXPECT_TRUE(fresh.accept(3, "R", 1, true)) << "a window not yet full judges only what it holds";
}

TEST(PublishDedup, LeavingARoomForgetsIt) {
  publish_dedup d(100);
  EXPECT_TRUE(d.accept(1, "R", 4));
  EXPECT_TRUE(d.accept(2, "R", 4));
  EXPECT_TRUE(d.accept(1, "S", 4));
  d.forget_room("R");
  EXPECT_EQ(d.pairs(), 1u);
  EXPECT_TRUE(d.accept(1, "R", 4));
  EXPECT_FALSE(d.accept(1, "S", 4));
  d.forget_room("nowhere");
  EXPECT_EQ(d.pairs(), 2u);
}

TEST(PublishDedup, ThePairTableIsBoundedByForgettingAll) {
  publish_dedup d(100);
  for (std::uint64_t o = 1; o <= publish_dedup::max_pairs; ++o) EXPECT_TRUE(d.accept(o, "R", 5));
  EXPECT_FALSE(d.accept(1, "R", 5)) << "still remembered at the bound";
  EXPECT_TRUE(d.accept(publish_dedup::max_pairs + 1, "R", 1)) << "one more pair clears the table";
  EXPECT_EQ(d.pairs(), 1u);
  EXPECT_TRUE(d.accept(1, "R", 5)) << "forgotten: at worst one copy sent again gets through";
  EXPECT_FALSE(d.accept(publish_dedup::max_pairs + 1, "R", 1)) << "the newcomer is remembered";
}

// ----------------------------------------------------- owed locally

TEST(PublishDedup, OwedUntilItsOwnCopyComesBack) {
  publish_dedup d(100);
  auto r = rec(4);
  d.owe(r);
  EXPECT_TRUE(r->owed_local);
  EXPECT_EQ(d.owed(), 1u);
  EXPECT_TRUE(d.settle(2).empty()) << "an earlier copy settles nothing";
  EXPECT_TRUE(r->owed_local);
  EXPECT_TRUE(d.settle(4).empty()) << "its copy is what our members get";
  EXPECT_FALSE(r->owed_local);
  EXPECT_EQ(d.owed(), 0u);
}

TEST(PublishDedup, ALaterCopyReturnsTheOwedOnesItPassed) {
  publish_dedup d(100);
  auto r1 = rec(1), r2 = rec(2), r3 = rec(3), r5 = rec(5);
  for (const auto& r : {r1, r2, r3, r5}) d.owe(r);
  // Copies come back in seq order: 1 and 2 never will.
  EXPECT_EQ(seqs(d.settle(3)), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_FALSE(r3->owed_local);
  EXPECT_TRUE(r1->owed_local) << "still owed until the caller delivers it";
  EXPECT_TRUE(r5->owed_local);
  EXPECT_EQ(d.owed(), 1u);
}

TEST(PublishDedup, OnesDeliveredLocallyMeanwhileAreNotReturnedAgain) {
  publish_dedup d(100);
  auto r1 = rec(1), r2 = rec(2);
  d.owe(r1);
  d.owe(r2);
  d.delivered_locally(*r1);  // e.g. its PUBLISH was refused
  EXPECT_FALSE(r1->owed_local);
  EXPECT_EQ(seqs(d.settle(3)), (std::vector<std::uint64_t>{2}));
}

TEST(PublishDedup, ALostConnectionHandsBackEverythingStillOwed) {
  publish_dedup d(100);
  auto r1 = rec(1), r2 = rec(2), r3 = rec(3);
  for (const auto& r : {r1, r2, r3}) d.owe(r);
  d.delivered_locally(*r2);
  EXPECT_EQ(seqs(d.take_owed()), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(d.owed(), 0u);
  EXPECT_TRUE(d.take_owed().empty());
  EXPECT_TRUE(d.settle(10).empty()) << "nothing is waited for any more";
}

// -------------------------------------------- delivered locally

TEST(PublishDedup, TheCopyOfALocalDeliveryIsSkippedOnce) {
  publish_dedup d(100);
  auto r = rec(4);
  r->owed_local = true;
  d.delivered_locally(*r);
  EXPECT_FALSE(r->owed_local);
  EXPECT_EQ(d.delivered_locally_pending(), 1u);
  EXPECT_TRUE(d.own_copy_delivered(4));
  EXPECT_FALSE(d.own_copy_delivered(4)) << "forgotten once skipped";
  EXPECT_EQ(d.delivered_locally_pending(), 0u);
}

TEST(PublishDedup, ACopyNotDeliveredLocallyIsNotSkipped) {
  publish_dedup d(100);
  auto r = rec(4);
  d.delivered_locally(*r);
  EXPECT_FALSE(d.own_copy_delivered(5));
  EXPECT_EQ(d.delivered_locally_pending(), 0u) << "5 came back: 4 never will";
}

TEST(PublishDedup, ALaterCopyForgetsEarlierLocalDeliveries) {
  publish_dedup d(100);
  for (std::uint64_t s : {1, 2, 3, 6}) {
    auto r = rec(s);
    d.delivered_locally(*r);
  }
  EXPECT_TRUE(d.own_copy_delivered(3));
  EXPECT_EQ(d.delivered_locally_pending(), 1u) << "only 6 is left";
  EXPECT_TRUE(d.own_copy_delivered(6));
}

TEST(PublishDedup, ForgetDropsOneThatWillNeverComeBack) {
  publish_dedup d(100);
  auto r = rec(2);
  d.delivered_locally(*r);
  d.forget(2);
  EXPECT_EQ(d.delivered_locally_pending(), 0u);
  EXPECT_FALSE(d.own_copy_delivered(2));
}

TEST(PublishDedup, LocalDeliveriesAreBoundedOldestFirst) {
  publish_dedup d(3);
  for (std::uint64_t s = 1; s <= 5; ++s) {
    auto r = rec(s);
    d.delivered_locally(*r);
  }
  EXPECT_EQ(d.delivered_locally_pending(), 3u);
  EXPECT_FALSE(d.own_copy_delivered(2)) << "trimmed";
  EXPECT_TRUE(d.own_copy_delivered(3));
}

}  // namespace
