#include "common/utf8.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/support/param_name.hpp"

namespace {

FG_PRINT_CASES_BY_NAME()

using bytes = std::vector<std::uint8_t>;

bytes b(std::initializer_list<int> v) {
  bytes out;
  for (int x : v) out.push_back(static_cast<std::uint8_t>(x));
  return out;
}

// ---------------------------------------------------------------------------
// Reference validator, written from the definition rather than from Table
// 3-7: decode the bits seen so far and ask whether any completion could
// still land on a valid scalar value for the sequence length. It is slow
// and obviously right, which is what a cross-check needs.
struct reference_result {
  bool prefix_ok;       // no impossible byte anywhere
  bool complete;        // prefix_ok and no sequence left open
  std::size_t fail_at;  // index of the first impossible byte (size when none)
};

bool range_can_be_valid(std::uint32_t lo, std::uint32_t hi, int len) {
  static constexpr std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  static constexpr std::uint32_t max_cp[] = {0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  lo = std::max(lo, min_cp[len]);
  hi = std::min(hi, max_cp[len]);
  if (lo > hi) return false;
  return !(lo >= 0xD800 && hi <= 0xDFFF);  // nothing left but surrogates
}

reference_result reference_validate(const bytes& in) {
  std::size_t i = 0;
  while (i < in.size()) {
    const std::uint8_t lead = in[i];
    int len;
    std::uint32_t cp;
    if (lead < 0x80) {
      len = 1;
      cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      len = 2;
      cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      len = 3;
      cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      len = 4;
      cp = lead & 0x07;
    } else
      return {false, false, i};
    for (int k = 0; k < len; ++k) {
      if (k > 0) {
        if (i + static_cast<std::size_t>(k) >= in.size()) return {true, false, in.size()};
        const std::uint8_t c = in[i + static_cast<std::size_t>(k)];
        if ((c & 0xC0) != 0x80) return {false, false, i + static_cast<std::size_t>(k)};
        cp = (cp << 6) | (c & 0x3F);
      }
      const int rest_bits = 6 * (len - 1 - k);
      const std::uint32_t lo = cp << rest_bits;
      const std::uint32_t hi = lo + ((1u << rest_bits) - 1);
      if (!range_can_be_valid(lo, hi, len)) return {false, false, i + static_cast<std::size_t>(k)};
    }
    i += static_cast<std::size_t>(len);
  }
  return {true, true, in.size()};
}

// Feeds one byte at a time; returns the index where feed() first said
// false (size when it never did) and whether the text ended complete.
std::pair<std::size_t, bool> feed_bytewise(const bytes& in) {
  fg::utf8_validator v;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!v.feed(&in[i], 1)) return {i, v.complete()};
  return {in.size(), v.complete()};
}

std::string hex(const bytes& in) {
  std::string s;
  char buf[4];
  for (auto x : in) {
    std::snprintf(buf, sizeof buf, "%02X ", x);
    s += buf;
  }
  return s;
}

// Compares the validator with the reference: whole buffer, and byte by byte
// for the exact fail-fast index.
void expect_matches_reference(const bytes& in) {
  const reference_result ref = reference_validate(in);
  fg::utf8_validator whole;
  const bool fed = whole.feed(in.data(), in.size());
  ASSERT_EQ(fed, ref.prefix_ok) << hex(in);
  ASSERT_EQ(whole.complete(), ref.complete) << hex(in);
  ASSERT_EQ(whole.failed(), !ref.prefix_ok) << hex(in);
  const auto [fail_at, complete] = feed_bytewise(in);
  ASSERT_EQ(fail_at, ref.fail_at) << hex(in);
  ASSERT_EQ(complete, ref.complete) << hex(in);
}

// The reference itself must know the classic cases, or the brute-force
// cross-check proves nothing.
TEST(utf8_reference, agrees_with_known_cases) {
  EXPECT_TRUE(reference_validate(b({0xF4, 0x8F, 0xBF, 0xBF})).complete);
  EXPECT_FALSE(reference_validate(b({0xF4, 0x90, 0x80, 0x80})).prefix_ok);
  EXPECT_FALSE(reference_validate(b({0xED, 0xA0, 0x80})).prefix_ok);
  EXPECT_EQ(reference_validate(b({0xE0, 0x80, 0x80})).fail_at, 1u);
  EXPECT_EQ(reference_validate(b({0xC0, 0x80})).fail_at, 0u);
  EXPECT_TRUE(reference_validate(b({0xEF, 0xBF, 0xBF})).complete);
  EXPECT_TRUE(reference_validate(b({0xF0})).prefix_ok);
  EXPECT_FALSE(reference_validate(b({0xF0})).complete);
}

// ---------------------------------------------------------------------------
// Valid texts: whole, split at every position, byte by byte.

struct named_text {
  const char* name;
  bytes text;
};

bytes long_ascii_around_euro() {
  bytes text(37, 'x');
  text.insert(text.begin() + 19, {0xE2, 0x82, 0xAC});
  return text;
}

class utf8_valid : public ::testing::TestWithParam<named_text> {};

TEST_P(utf8_valid, accepted_whole) {
  const bytes& t = GetParam().text;
  EXPECT_TRUE(fg::is_valid_utf8(t));
  fg::utf8_validator v;
  EXPECT_TRUE(v.feed(t.data(), t.size()));
  EXPECT_TRUE(v.complete());
  EXPECT_FALSE(v.failed());
}

TEST_P(utf8_valid, accepted_split_at_every_position) {
  const bytes& t = GetParam().text;
  for (std::size_t cut = 0; cut <= t.size(); ++cut) {
    fg::utf8_validator v;
    EXPECT_TRUE(v.feed(t.data(), cut)) << "cut " << cut;
    EXPECT_TRUE(v.feed(t.data() + cut, t.size() - cut)) << "cut " << cut;
    EXPECT_TRUE(v.complete()) << "cut " << cut;
  }
}

TEST_P(utf8_valid, accepted_byte_by_byte) {
  const auto [fail_at, complete] = feed_bytewise(GetParam().text);
  EXPECT_EQ(fail_at, GetParam().text.size());
  EXPECT_TRUE(complete);
}

TEST_P(utf8_valid, every_prefix_is_valid_and_complete_only_at_a_boundary) {
  // A prefix cut inside a character can still be completed: not failed,
  // just not complete.
  const bytes& t = GetParam().text;
  for (std::size_t n = 0; n <= t.size(); ++n) {
    fg::utf8_validator v;
    EXPECT_TRUE(v.feed(t.data(), n)) << "prefix " << n;
    EXPECT_FALSE(v.failed()) << "prefix " << n;
    const bool at_boundary = n == t.size() || (t[n] & 0xC0) != 0x80;
    EXPECT_EQ(v.complete(), at_boundary) << "prefix " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    texts, utf8_valid,
    ::testing::Values(named_text{"empty", {}}, named_text{"ascii", b({'h', 'e', 'l', 'l', 'o', ' ', 0x00, 0x7F})},
                      named_text{"two_byte", b({0xC2, 0x80, 0xC3, 0xA9, 0xDF, 0xBF})},               // U+0080 é U+07FF
                      named_text{"three_byte", b({0xE0, 0xA0, 0x80, 0xE2, 0x82, 0xAC})},             // U+0800 €
                      named_text{"four_byte", b({0xF0, 0x90, 0x80, 0x80, 0xF0, 0x9F, 0x98, 0x80})},  // U+10000 😀
                      named_text{"max_scalar_10FFFF", b({0xF4, 0x8F, 0xBF, 0xBF})},
                      named_text{"U_FFFF", b({0xEF, 0xBF, 0xBF})}, named_text{"U_D7FF", b({0xED, 0x9F, 0xBF})},
                      named_text{"U_E000", b({0xEE, 0x80, 0x80})},
                      named_text{"mixed", b({'a', 0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 'b', 0xF0, 0x9F, 0x8E, 0x89, 'c'})},
                      // Long enough to take the 16- and 8-byte fast paths on
                      // both sides of a multi-byte sequence.
                      named_text{"long_ascii_around_euro", long_ascii_around_euro()}),
    fg::test::param_name{});

// ---------------------------------------------------------------------------
// Invalid sequences: rejected, and at exactly the first impossible byte.

struct invalid_text {
  const char* name;
  bytes text;
  std::size_t fail_at;  // index of the first byte no continuation can fix
};

class utf8_invalid : public ::testing::TestWithParam<invalid_text> {};

TEST_P(utf8_invalid, rejected_whole) {
  const bytes& t = GetParam().text;
  EXPECT_FALSE(fg::is_valid_utf8(t));
  fg::utf8_validator v;
  EXPECT_FALSE(v.feed(t.data(), t.size()));
  EXPECT_TRUE(v.failed());
  EXPECT_FALSE(v.complete());
}

TEST_P(utf8_invalid, fails_at_first_impossible_byte) {
  EXPECT_EQ(feed_bytewise(GetParam().text).first, GetParam().fail_at);
  EXPECT_EQ(reference_validate(GetParam().text).fail_at, GetParam().fail_at) << "test table and reference disagree";
}

TEST_P(utf8_invalid, split_fails_in_the_piece_holding_the_bad_byte) {
  const bytes& t = GetParam().text;
  for (std::size_t cut = 0; cut <= t.size(); ++cut) {
    fg::utf8_validator v;
    const bool first = v.feed(t.data(), cut);
    EXPECT_EQ(first, GetParam().fail_at >= cut) << "cut " << cut;
    EXPECT_FALSE(v.feed(t.data() + cut, t.size() - cut)) << "cut " << cut;
    EXPECT_TRUE(v.failed());
  }
}

TEST_P(utf8_invalid, stays_failed_until_reset) {
  fg::utf8_validator v;
  v.feed(GetParam().text.data(), GetParam().text.size());
  const std::uint8_t ascii = 'a';
  EXPECT_FALSE(v.feed(&ascii, 1));
  EXPECT_FALSE(v.feed(nullptr, 0));
  v.reset();
  EXPECT_TRUE(v.feed(&ascii, 1));
  EXPECT_TRUE(v.complete());
}

INSTANTIATE_TEST_SUITE_P(
    sequences, utf8_invalid,
    ::testing::Values(invalid_text{"overlong_2_C0_80", b({0xC0, 0x80}), 0},
                      invalid_text{"overlong_2_C1_BF", b({0xC1, 0xBF}), 0},
                      invalid_text{"overlong_3_E0_80_80", b({0xE0, 0x80, 0x80}), 1},
                      invalid_text{"overlong_3_E0_9F_BF", b({0xE0, 0x9F, 0xBF}), 1},
                      invalid_text{"overlong_4_F0_80_80_80", b({0xF0, 0x80, 0x80, 0x80}), 1},
                      invalid_text{"overlong_4_F0_8F_BF_BF", b({0xF0, 0x8F, 0xBF, 0xBF}), 1},
                      invalid_text{"surrogate_ED_A0_80", b({0xED, 0xA0, 0x80}), 1},
                      invalid_text{"surrogate_ED_AD_BF", b({0xED, 0xAD, 0xBF}), 1},
                      invalid_text{"surrogate_ED_BF_BF", b({0xED, 0xBF, 0xBF}), 1},
                      invalid_text{"surrogate_pair_as_cesu8", b({0xED, 0xA0, 0xBD, 0xED, 0xB2, 0xA9}), 1},
                      invalid_text{"above_max_F4_90_80_80", b({0xF4, 0x90, 0x80, 0x80}), 1},
                      invalid_text{"lead_F5", b({0xF5, 0x80, 0x80, 0x80}), 0},
                      invalid_text{"lead_F6", b({0xF6, 0x80, 0x80, 0x80}), 0},
                      invalid_text{"lead_F7", b({0xF7, 0xBF, 0xBF, 0xBF}), 0},
                      invalid_text{"lead_F8_five_byte", b({0xF8, 0x88, 0x80, 0x80, 0x80}), 0},
                      invalid_text{"lead_FC_six_byte", b({0xFC, 0x84, 0x80, 0x80, 0x80, 0x80}), 0},
                      invalid_text{"byte_FE", b({'a', 0xFE}), 1}, invalid_text{"byte_FF", b({'a', 'b', 0xFF}), 2},
                      invalid_text{"lone_continuation_80", b({0x80}), 0},
                      invalid_text{"lone_continuation_BF_after_ascii", b({'a', 'b', 'c', 0xBF}), 3},
                      invalid_text{"extra_continuation", b({0xC3, 0xA9, 0xA9}), 2},
                      invalid_text{"two_byte_then_ascii", b({0xC3, 'a'}), 1},
                      invalid_text{"three_byte_cut_by_ascii", b({0xE2, 0x82, 'a'}), 2},
                      invalid_text{"four_byte_cut_by_lead", b({0xF0, 0x9F, 0x98, 0xF0}), 3},
                      invalid_text{"valid_then_bad_late", b({'h', 0xC3, 0xA9, 'l', 'l', 0xF0, 0x9F, 0x98, 0x80, 0xC0}),
                                   9}),
    fg::test::param_name{});

struct truncated_text {
  const char* name;
  bytes text;
};

class utf8_truncated : public ::testing::TestWithParam<truncated_text> {};

TEST_P(utf8_truncated, incomplete_at_the_end) {
  const bytes& t = GetParam().text;
  fg::utf8_validator v;
  EXPECT_TRUE(v.feed(t.data(), t.size())) << "a truncated sequence can still be completed";
  EXPECT_FALSE(v.complete());
  EXPECT_FALSE(fg::is_valid_utf8(t));
}

INSTANTIATE_TEST_SUITE_P(sequences, utf8_truncated,
                         ::testing::Values(truncated_text{"two_of_two_missing_one", b({'a', 0xC3})},
                                           truncated_text{"three_missing_two", b({0xE2})},
                                           truncated_text{"three_missing_one", b({0xE2, 0x82})},
                                           truncated_text{"four_missing_three", b({0xF0})},
                                           truncated_text{"four_missing_one", b({0xF4, 0x8F, 0xBF})}),
                         fg::test::param_name{});

// ---------------------------------------------------------------------------
// The ASCII fast path reads 16 and 8 bytes at a time: a non-ASCII byte must
// be seen wherever it falls relative to those words and to the buffer start.

constexpr std::size_t fast_path_len = 40;

bytes ascii_with(std::size_t pos, std::initializer_list<std::uint8_t> seq) {
  bytes t(fast_path_len, 'a');
  std::size_t i = pos;
  for (auto x : seq) t[i++] = x;
  return t;
}

TEST(utf8_fast_path, invalid_byte_at_every_position_and_alignment) {
  for (std::size_t align = 0; align < 16; ++align) {
    for (std::size_t pos = 0; pos < fast_path_len; ++pos) {
      bytes t = ascii_with(pos, {0xFF});
      bytes storage(align, 'z');
      storage.insert(storage.end(), t.begin(), t.end());
      fg::utf8_validator v;
      EXPECT_FALSE(v.feed(storage.data() + align, t.size())) << "pos " << pos << " align " << align;
    }
  }
}

TEST(utf8_fast_path, lone_continuation_at_every_position) {
  for (std::size_t pos = 0; pos < fast_path_len; ++pos)
    EXPECT_FALSE(fg::is_valid_utf8(ascii_with(pos, {0x80}))) << "pos " << pos;
}

TEST(utf8_fast_path, valid_multibyte_at_every_position) {
  for (std::size_t pos = 0; pos + 1 < fast_path_len; ++pos)
    EXPECT_TRUE(fg::is_valid_utf8(ascii_with(pos, {0xC3, 0xA9}))) << "pos " << pos;
  for (std::size_t pos = 0; pos + 3 < fast_path_len; ++pos)
    EXPECT_TRUE(fg::is_valid_utf8(ascii_with(pos, {0xF0, 0x9F, 0x98, 0x80}))) << "pos " << pos;
}

TEST(utf8_fast_path, bad_continuation_at_every_position) {
  // The lead is fine; the byte after it is ASCII, which the fast path must
  // not skip over while a sequence is open.
  for (std::size_t pos = 0; pos + 1 < fast_path_len; ++pos)
    EXPECT_FALSE(fg::is_valid_utf8(ascii_with(pos, {0xC3}))) << "pos " << pos;
}

TEST(utf8_fast_path, open_lead_at_the_end_is_incomplete) {
  fg::utf8_validator v;
  bytes t = ascii_with(fast_path_len - 1, {0xE2});
  EXPECT_TRUE(v.feed(t.data(), t.size()));
  EXPECT_FALSE(v.complete());
}

TEST(utf8_fast_path, every_position_matches_reference) {
  // Every lead/continuation kind at every position of the 40-byte buffer.
  for (int x = 0x80; x <= 0xFF; ++x)
    for (std::size_t pos = 0; pos < fast_path_len; ++pos)
      expect_matches_reference(ascii_with(pos, {static_cast<std::uint8_t>(x)}));
}

// ---------------------------------------------------------------------------
// Brute force against the reference.

TEST(utf8_brute_force, every_one_and_two_byte_sequence) {
  for (int x = 0; x < 256; ++x) expect_matches_reference(b({x}));
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y) expect_matches_reference(b({x, y}));
}

TEST(utf8_brute_force, every_three_byte_sequence) {
  bytes t(3);
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y)
      for (int z = 0; z < 256; ++z) {
        t = {static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y), static_cast<std::uint8_t>(z)};
        const reference_result ref = reference_validate(t);
        fg::utf8_validator v;
        const bool fed = v.feed(t.data(), t.size());
        // Plain ifs: 16M EXPECTs would dominate the run time.
        if (fed != ref.prefix_ok || v.complete() != ref.complete || feed_bytewise(t).first != ref.fail_at) {
          expect_matches_reference(t);
          return;
        }
      }
}

TEST(utf8_brute_force, four_byte_sample) {
  // Every lead and second byte with the interesting third and fourth bytes
  // (range edges of Table 3-7), then random sequences.
  const std::uint8_t edges[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y)
      for (auto z : edges)
        for (auto w : edges) {
          const bytes t = b({x, y, z, w});
          const reference_result ref = reference_validate(t);
          if (fg::is_valid_utf8(t) != ref.complete || feed_bytewise(t).first != ref.fail_at) {
            expect_matches_reference(t);
            return;
          }
        }
  std::mt19937 rng(6455);
  std::uniform_int_distribution<int> lead(0xF0, 0xF4), cont(0x80, 0xBF), any(0, 255);
  for (int n = 0; n < 200000; ++n) {
    // Mostly plausible sequences, so the interesting ranges are hit often.
    const bytes t = b({lead(rng), n % 7 ? cont(rng) : any(rng), n % 11 ? cont(rng) : any(rng), cont(rng)});
    const reference_result ref = reference_validate(t);
    if (fg::is_valid_utf8(t) != ref.complete || feed_bytewise(t).first != ref.fail_at) {
      expect_matches_reference(t);
      return;
    }
  }
}

TEST(utf8_brute_force, random_texts_in_random_pieces) {
  // Longer mixed texts cut anywhere: pieces must agree with the whole.
  std::mt19937 rng(1);
  const std::uint8_t alphabet[] = {'a',  0x80, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0, 0xE2, 0xED,
                                   0xEF, 0xF0, 0xF4, 0xA0, 0x9F, 0x90, 0x8F, 0xF5, 0xFF};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof alphabet - 1), len(0, 48);
  for (int n = 0; n < 20000; ++n) {
    bytes t(len(rng));
    for (auto& x : t) x = alphabet[pick(rng)];
    const reference_result ref = reference_validate(t);
    std::uniform_int_distribution<std::size_t> cut(0, t.size());
    std::size_t c1 = cut(rng), c2 = cut(rng);
    if (c1 > c2) std::swap(c1, c2);
    fg::utf8_validator v;
    // No short-circuit: the later pieces must also be refused once failed.
    bool ok = v.feed(t.data(), c1);
    ok = v.feed(t.data() + c1, c2 - c1) && ok;
    ok = v.feed(t.data() + c2, t.size() - c2) && ok;
    ASSERT_EQ(ok, ref.prefix_ok) << hex(t) << " cuts " << c1 << "," << c2;
    ASSERT_EQ(v.complete(), ref.complete) << hex(t);
  }
}

}  // namespace
