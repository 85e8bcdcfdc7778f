#include "gateway/ws/unmask.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/unit/support/ws_frames.hpp"

namespace {

using fg::test::bytes;
using fg::ws::mask_key;

const mask_key key{0xA1, 0x5B, 0x3C, 0xE7};

// RFC 6455 §5.3 literally: octet i XOR key[i mod 4], starting at `phase`.
bytes reference_unmask(bytes data, std::uint8_t phase) {
  for (std::size_t i = 0; i < data.size(); ++i) data[i] ^= key[(i + phase) % 4];
  return data;
}

TEST(unmask, matches_reference_for_every_length_and_phase) {
  for (std::size_t len = 0; len <= 100; ++len) {
    for (std::uint8_t phase = 0; phase < 4; ++phase) {
      const bytes in = fg::test::pattern(len, static_cast<std::uint8_t>(len));
      bytes out = in;
      const std::uint8_t next = fg::ws::unmask(out.data(), out.size(), key, phase);
      EXPECT_EQ(out, reference_unmask(in, phase)) << "len " << len << " phase " << int(phase);
      EXPECT_EQ(next, (phase + len) % 4) << "len " << len << " phase " << int(phase);
    }
  }
}

TEST(unmask, unaligned_pointers_touch_only_their_range) {
  // Guard bytes around the range catch a wide load/store that spills over.
  constexpr std::uint8_t guard = 0xCD;
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t len : {1u, 7u, 8u, 15u, 16u, 17u, 31u, 33u, 64u, 99u}) {
      bytes storage(offset + len + 16, guard);
      const bytes in = fg::test::pattern(len, 3);
      std::copy(in.begin(), in.end(), storage.begin() + static_cast<std::ptrdiff_t>(offset));
      fg::ws::unmask(storage.data() + offset, len, key, 1);
      const bytes got(storage.begin() + static_cast<std::ptrdiff_t>(offset),
                      storage.begin() + static_cast<std::ptrdiff_t>(offset + len));
      EXPECT_EQ(got, reference_unmask(in, 1)) << "offset " << offset << " len " << len;
      for (std::size_t i = 0; i < offset; ++i) EXPECT_EQ(storage[i], guard);
      for (std::size_t i = offset + len; i < storage.size(); ++i) EXPECT_EQ(storage[i], guard);
    }
  }
}

TEST(unmask, pieces_chained_by_phase_equal_whole) {
  // A payload split across reads is unmasked piece by piece with the phase
  // each call returns; any split must give the whole-buffer result.
  std::mt19937 rng(5);
  for (std::size_t len : {0u, 1u, 5u, 16u, 37u, 100u, 257u}) {
    const bytes in = fg::test::pattern(len, 9);
    const bytes expected = reference_unmask(in, 0);
    for (int trial = 0; trial < 50; ++trial) {
      bytes out = in;
      std::uint8_t phase = 0;
      std::size_t at = 0;
      while (at < len) {
        std::uniform_int_distribution<std::size_t> step(1, std::min<std::size_t>(len - at, 23));
        const std::size_t n = step(rng);
        phase = fg::ws::unmask(out.data() + at, n, key, phase);
        at += n;
      }
      EXPECT_EQ(out, expected) << "len " << len << " trial " << trial;
      EXPECT_EQ(phase, len % 4);
    }
  }
}

TEST(unmask, every_two_way_split_equals_whole) {
  const bytes in = fg::test::pattern(70, 1);
  const bytes expected = reference_unmask(in, 2);
  for (std::size_t cut = 0; cut <= in.size(); ++cut) {
    bytes out = in;
    const std::uint8_t mid = fg::ws::unmask(out.data(), cut, key, 2);
    fg::ws::unmask(out.data() + cut, in.size() - cut, key, mid);
    EXPECT_EQ(out, expected) << "cut " << cut;
  }
}

TEST(unmask, twice_is_identity) {
  const bytes in = fg::test::pattern(50, 4);
  bytes out = in;
  fg::ws::unmask(out.data(), out.size(), key, 3);
  EXPECT_NE(out, in);
  fg::ws::unmask(out.data(), out.size(), key, 3);
  EXPECT_EQ(out, in);
}

}  // namespace
