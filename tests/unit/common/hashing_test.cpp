// Rendezvous hashing: an even spread, and minimal movement when a worker
// joins or leaves.
#include "common/hashing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr int key_count = 100'000;

std::vector<std::uint64_t> key_hashes() {
  std::vector<std::uint64_t> keys;
  keys.reserve(key_count);
  for (int i = 0; i < key_count; ++i) keys.push_back(fg::hash64(std::to_string(i)));
  return keys;
}

std::vector<std::uint64_t> worker_hashes(int n, int first = 1) {
  std::vector<std::uint64_t> out;
  for (int i = first; i < first + n; ++i) out.push_back(fg::hash64("w" + std::to_string(i)));
  return out;
}

int pick(std::uint64_t key, const std::vector<std::uint64_t>& workers, int excluded = -1) {
  return fg::rendezvous_pick(
      key, static_cast<int>(workers.size()), [&](int i) { return workers[static_cast<std::size_t>(i)]; },
      [&](int i) { return i != excluded; });
}

TEST(Hashing, HashIsStableAndSpreadsBits) {
  static_assert(fg::hash64("") == fg::mix64(0xcbf29ce484222325ULL));
  EXPECT_EQ(fg::hash64("abc"), fg::hash64("abc"));
  EXPECT_NE(fg::hash64("abc"), fg::hash64("abd"));
  // One changed input bit flips about half the output bits.
  const auto flipped = fg::hash64("key-0") ^ fg::hash64("key-1");
  const int bits = __builtin_popcountll(flipped);
  EXPECT_GT(bits, 16);
  EXPECT_LT(bits, 48);
}

TEST(Hashing, RendezvousSpreadsKeysEvenlyOverTwoToSixteenWorkers) {
  const auto keys = key_hashes();
  for (int n = 2; n <= 16; ++n) {
    const auto workers = worker_hashes(n);
    std::vector<int> count(static_cast<std::size_t>(n), 0);
    for (const auto k : keys) ++count[static_cast<std::size_t>(pick(k, workers))];
    const double expected = static_cast<double>(key_count) / n;
    for (int w = 0; w < n; ++w) {
      const double off = std::abs(count[static_cast<std::size_t>(w)] - expected) / expected;
      EXPECT_LT(off, 0.05) << n << " workers: worker " << w << " got " << count[static_cast<std::size_t>(w)]
                           << " keys, expected about " << expected;
    }
  }
}

TEST(Hashing, RemovingAWorkerMovesOnlyItsKeys) {
  const auto keys = key_hashes();
  for (int n = 2; n <= 16; ++n) {
    const auto workers = worker_hashes(n);
    std::vector<int> before_pick;
    for (const auto k : keys) before_pick.push_back(pick(k, workers));
    // The first, a middle and the last candidate: position must not matter.
    for (const int gone : {0, n / 2, n - 1}) {
      int moved = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const int before = before_pick[i];
        const int after = pick(keys[i], workers, gone);
        ASSERT_NE(after, gone);
        if (before != gone) {
          ASSERT_EQ(after, before) << "a key not won by the removed worker moved";
        } else {
          ++moved;
        }
      }
      // What moved is the removed worker's share, about 1/n of the keys.
      EXPECT_NEAR(static_cast<double>(moved) / key_count, 1.0 / n, 0.05 / n);
    }
  }
}

TEST(Hashing, AddingAWorkerTakesOnlyTheKeysItWins) {
  const auto keys = key_hashes();
  for (int n = 2; n <= 15; ++n) {
    const auto before_workers = worker_hashes(n);
    auto after_workers = before_workers;
    after_workers.push_back(fg::hash64("w-new"));
    int taken = 0;
    for (const auto k : keys) {
      const int before = pick(k, before_workers);
      const int after = pick(k, after_workers);
      if (after == n) {
        ++taken;
      } else {
        ASSERT_EQ(after, before) << "a key moved between two old workers";
      }
    }
    EXPECT_NEAR(static_cast<double>(taken) / key_count, 1.0 / (n + 1), 0.05 / (n + 1));
  }
}

TEST(Hashing, IneligibleCandidatesAreSkippedAndNoneGivesMinusOne) {
  const auto workers = worker_hashes(4);
  EXPECT_EQ(
      fg::rendezvous_pick(
          fg::hash64("k"), 4, [&](int i) { return workers[static_cast<std::size_t>(i)]; }, [](int) { return false; }),
      -1);
  EXPECT_EQ(fg::rendezvous_pick(
                fg::hash64("k"), 4, [&](int i) { return workers[static_cast<std::size_t>(i)]; },
                [](int i) { return i == 2; }),
            2);
  EXPECT_EQ(fg::rendezvous_pick(
                fg::hash64("k"), 0, [](int) { return 0ull; }, [](int) { return true; }),
            -1);
}

}  // namespace
