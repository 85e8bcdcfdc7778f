#include "gateway/ws/inflater.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <zlib.h>

#include "tests/unit/support/ws_frames.hpp"

namespace {

using namespace fg::test;
using fg::byte_buffer;
using fg::ws::error;
using fg::ws::inflater;
using fg::ws::inflater_pool;

constexpr std::uint64_t no_limit = 1u << 30;

// What a message inflates to, fed in one piece.
std::string inflated(inflater& i, const bytes& compressed, error expected = error::none,
                     std::uint64_t limit = no_limit) {
  byte_buffer out;
  error e = i.inflate(compressed, out, limit);
  if (e == error::none) e = i.finish_message(out, limit);
  EXPECT_EQ(e, expected);
  return to_string(out.span());
}

// A reference compressor: zlib raw deflate, sync flush, tail removed.
bytes reference_deflate(const bytes& in, int window_bits = 15, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, -window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  bytes out(deflateBound(&z, in.size()) + 16);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
  out.resize(out.size() - z.avail_out - 4);
  deflateEnd(&z);
  return out;
}

// RFC 7692 §7.2.3.1: "Hello" compressed.
const bytes hello_compressed{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00};

TEST(inflater, rfc_7692_examples) {
  inflater i;
  EXPECT_EQ(inflated(i, hello_compressed), "Hello");
  i.reset();
  // §7.2.3.3: the same with BFINAL set (0xf3) and the tail's empty block.
  EXPECT_EQ(inflated(i, {0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00}), "Hello");
  i.reset();
  // §7.2.3.4: "Hello" in a stored (uncompressed) block.
  EXPECT_EQ(inflated(i, {0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00}), "Hello");
  i.reset();
  // §7.2.3.6: an empty message, and an empty payload.
  EXPECT_EQ(inflated(i, {0x00}), "");
  i.reset();
  EXPECT_EQ(inflated(i, {}), "");
}

TEST(inflater, context_takeover_shares_the_window) {
  // §7.2.3.2: the second "Hello" refers back to the first.
  inflater i;
  EXPECT_EQ(inflated(i, hello_compressed), "Hello");
  EXPECT_EQ(inflated(i, {0xf2, 0x00, 0x11, 0x00, 0x00}), "Hello");
}

TEST(inflater, reset_forgets_the_window) {
  inflater i;
  EXPECT_EQ(inflated(i, hello_compressed), "Hello");
  i.reset();
  inflated(i, {0xf2, 0x00, 0x11, 0x00, 0x00}, error::invalid_deflate_data);
}

TEST(inflater, a_final_block_keeps_the_window_for_the_next_message) {
  // §7.2.3.3 then §7.2.3.2: with takeover the window survives BFINAL.
  inflater i;
  EXPECT_EQ(inflated(i, {0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}), "Hello");
  EXPECT_EQ(inflated(i, {0xf2, 0x00, 0x11, 0x00, 0x00}), "Hello");
}

TEST(inflater, bytes_after_a_final_block_are_ignored) {
  inflater i;
  EXPECT_EQ(inflated(i, {0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0xde, 0xad}), "Hello");
}

TEST(inflater, input_split_at_every_offset) {
  const bytes message = pattern(5000);
  const bytes compressed = reference_deflate(message);
  for (std::size_t cut = 0; cut <= compressed.size(); ++cut) {
    inflater i;
    byte_buffer out;
    ASSERT_EQ(i.inflate(std::span(compressed).first(cut), out, no_limit), error::none) << cut;
    ASSERT_EQ(i.inflate(std::span(compressed).subspan(cut), out, no_limit), error::none) << cut;
    ASSERT_EQ(i.finish_message(out, no_limit), error::none) << cut;
    ASSERT_EQ(bytes(out.span().begin(), out.span().end()), message) << cut;
  }
}

TEST(inflater, every_window_size) {
  const bytes message = concat({pattern(3000), pattern(3000), to_bytes(std::string(2000, 'z'))});
  for (int bits = 9; bits <= 15; ++bits) {
    inflater i(bits);
    EXPECT_EQ(inflated(i, reference_deflate(message, bits)), to_string(message)) << bits;
  }
  // A peer that negotiated 8 compresses with zlib's 9: read with 9.
  inflater eight(8);
  EXPECT_EQ(inflated(eight, reference_deflate(message, 9)), to_string(message));
}

TEST(inflater, corrupt_data) {
  inflater i;
  // 0xff: BTYPE 11, a reserved block type (RFC 1951 §3.2.3).
  inflated(i, {0xff, 0xff, 0xff}, error::invalid_deflate_data);
  i.reset();
  // A stored block whose LEN and NLEN do not match.
  inflated(i, {0x00, 0x05, 0x00, 0x00, 0x00, 'H'}, error::invalid_deflate_data);
  i.reset();
  EXPECT_EQ(inflated(i, hello_compressed), "Hello");  // usable again after a reset
}

TEST(inflater, a_distance_beyond_the_data_so_far_is_corrupt) {
  // The second §7.2.3.2 message on its own refers to nothing.
  inflater i;
  inflated(i, {0xf2, 0x00, 0x11, 0x00, 0x00}, error::invalid_deflate_data);
}

TEST(inflater, zip_bomb_stops_one_byte_past_the_limit) {
  const bytes zeros(8 << 20, 0);  // 8 MiB of zeros compress to about 8 KiB
  const bytes bomb = reference_deflate(zeros, 15, 9);
  ASSERT_LT(bomb.size(), 16u * 1024);
  const std::uint64_t limit = 64 * 1024;
  inflater i;
  byte_buffer out;
  EXPECT_EQ(i.inflate(bomb, out, limit), error::message_too_big);
  EXPECT_EQ(out.size(), limit + 1);
  EXPECT_LE(out.capacity(), 2 * limit + 8192);  // the memory was not spent
}

TEST(inflater, exactly_the_limit_is_allowed) {
  const bytes message = pattern(10000);
  const bytes compressed = reference_deflate(message);
  inflater i;
  byte_buffer out;
  ASSERT_EQ(i.inflate(compressed, out, message.size()), error::none);
  ASSERT_EQ(i.finish_message(out, message.size()), error::none);
  EXPECT_EQ(out.size(), message.size());
  inflater j;
  byte_buffer small;
  EXPECT_EQ(j.inflate(compressed, small, message.size() - 1), error::message_too_big);
}

TEST(inflater, limit_applies_to_what_the_buffer_already_holds) {
  inflater i;
  byte_buffer out;
  out.append("abc", 3);
  EXPECT_EQ(i.inflate(hello_compressed, out, 7), error::message_too_big);
}

TEST(inflater_pool, reuses_reset_inflaters) {
  inflater_pool pool;
  auto a = pool.acquire();
  EXPECT_EQ(inflated(*a, hello_compressed), "Hello");
  inflater* const raw = a.get();
  pool.release(std::move(a));
  EXPECT_EQ(pool.pooled(), 1u);
  auto b = pool.acquire();
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(pool.pooled(), 0u);
  // Reset on release: the window of the last message is gone.
  inflated(*b, {0xf2, 0x00, 0x11, 0x00, 0x00}, error::invalid_deflate_data);
  pool.release(nullptr);
  EXPECT_EQ(pool.pooled(), 0u);
}

TEST(inflater, memory_bound_follows_zlib_documentation) {
  EXPECT_EQ(inflater::memory_bound(15), (1u << 15) + 7 * 1024);
  EXPECT_EQ(inflater::memory_bound(10), (1u << 10) + 7 * 1024);
  EXPECT_EQ(inflater::memory_bound(8), inflater::memory_bound(9));
}

}  // namespace
