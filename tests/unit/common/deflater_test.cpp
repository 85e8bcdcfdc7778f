#include "common/deflate/deflater.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "gateway/ws/inflater.hpp"
#include "tests/unit/support/ws_frames.hpp"

namespace {

using namespace fg::test;
using fg::byte_buffer;
using fg::deflate_tuning;
using fg::deflater;
using fg::deflater_set;
using fg::ws::error;
using fg::ws::inflater;

bytes compress(deflater& d, const bytes& in) {
  byte_buffer out;
  d.compress(in, out);
  return bytes(out.span().begin(), out.span().end());
}

bytes inflate(inflater& i, const bytes& compressed) {
  byte_buffer out;
  EXPECT_EQ(i.inflate(compressed, out, 1u << 30), error::none);
  EXPECT_EQ(i.finish_message(out, 1u << 30), error::none);
  return bytes(out.span().begin(), out.span().end());
}

bytes json_like(std::size_t size) {
  std::string s;
  for (int i = 0; s.size() < size; ++i)
    s += R"({"room":"lobby","user":"u)" + std::to_string(i % 97) + R"(","text":"hello there","seq":)" +
         std::to_string(i) + "},";
  return to_bytes(s.substr(0, size));
}

TEST(deflater, rfc_7692_hello) {
  // §7.2.3.1: "Hello" with no context takes these 7 bytes.
  deflater d(15, {}, false);
  EXPECT_EQ(compress(d, to_bytes("Hello")), (bytes{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}));
  // Reset after each message: the same bytes again.
  EXPECT_EQ(compress(d, to_bytes("Hello")), (bytes{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}));
}

TEST(deflater, context_takeover_refers_to_earlier_messages) {
  // §7.2.3.2: the second "Hello" is a back reference.
  deflater d(15, {}, true);
  EXPECT_EQ(compress(d, to_bytes("Hello")), (bytes{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}));
  EXPECT_EQ(compress(d, to_bytes("Hello")), (bytes{0xf2, 0x00, 0x11, 0x00, 0x00}));
}

TEST(deflater, empty_message_is_one_zero_byte) {
  // §7.2.3.6, with or without context, first or after another message.
  for (const bool takeover : {false, true}) {
    deflater d(15, {}, takeover);
    inflater i;
    EXPECT_EQ(compress(d, {}), (bytes{0x00}));
    EXPECT_EQ(inflate(i, compress(d, {})), bytes{});
    EXPECT_EQ(inflate(i, compress(d, to_bytes("Hello"))), to_bytes("Hello"));
    EXPECT_EQ(compress(d, {}), (bytes{0x00}));
    EXPECT_EQ(inflate(i, compress(d, {})), bytes{});
    EXPECT_EQ(inflate(i, compress(d, to_bytes("Hello"))), to_bytes("Hello"));
  }
}

TEST(deflater, round_trip_every_window_level_and_mem_level) {
  const bytes message = concat({json_like(7000), pattern(3000), json_like(2000)});
  for (int bits = 8; bits <= 15; ++bits)
    for (int level : {1, 6, 9})
      for (int mem : {1, 8, 9}) {
        deflater d(bits, {level, mem}, false);
        inflater i(bits);
        ASSERT_EQ(inflate(i, compress(d, message)), message) << bits << " " << level << " " << mem;
      }
}

TEST(deflater, a_window_of_8_reads_with_a_256_byte_window) {
  // zlib compresses 8 with 9 but never reaches back more than 250 bytes:
  // an inflater that truly has 256 bytes (zlib's own, windowBits 8) reads it.
  const bytes message = concat({json_like(5000), pattern(4000), json_like(5000)});
  deflater d(8, {9, 9}, false);
  const bytes compressed = compress(d, message);
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, -8), Z_OK);
  bytes out(message.size() + 16);
  bytes in = concat({compressed, bytes{0x00, 0x00, 0xff, 0xff}});
  z.next_in = in.data();
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(::inflate(&z, Z_SYNC_FLUSH), Z_OK);
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  EXPECT_EQ(out, message);
}

TEST(deflater, takeover_streams_stay_in_step_over_many_messages) {
  deflater d(10, {6, 4}, true);
  inflater i(10);
  std::size_t compressed_total = 0, plain_total = 0;
  for (int n = 0; n < 200; ++n) {
    const bytes message = json_like(100 + static_cast<std::size_t>(n % 7) * 50);
    const bytes c = compress(d, message);
    ASSERT_EQ(inflate(i, c), message) << n;
    compressed_total += c.size();
    plain_total += message.size();
  }
  EXPECT_LT(compressed_total * 4, plain_total);  // similar small messages compress well with takeover
}

TEST(deflater, large_message) {
  const bytes message = json_like(3 << 20);
  deflater d(15, {1, 8}, false);
  inflater i;
  const bytes c = compress(d, message);
  EXPECT_LT(c.size(), message.size() / 4);
  EXPECT_EQ(inflate(i, c), message);
}

TEST(deflater, compress_appends) {
  deflater d(15, {}, false);
  byte_buffer out;
  out.append("xy", 2);
  d.compress(to_bytes("Hello"), out);
  EXPECT_EQ(bytes(out.span().begin(), out.span().end()), (bytes{'x', 'y', 0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}));
}

TEST(deflater_set, one_shared_deflater_per_window) {
  deflater_set set({});
  EXPECT_EQ(&set.for_window(15), &set.for_window(15));
  EXPECT_NE(&set.for_window(15), &set.for_window(10));
  EXPECT_EQ(&set.for_window(8), &set.for_window(9));  // zlib compresses 8 as 9
  // Shared means no context: each message stands alone.
  const bytes first = compress(set.for_window(12), to_bytes("Hello"));
  EXPECT_EQ(compress(set.for_window(12), to_bytes("Hello")), first);
}

TEST(deflater, memory_bound_follows_zlib_documentation) {
  EXPECT_EQ(deflater::memory_bound(15, 8), (1u << 17) + (1u << 17) + 6 * 1024);
  EXPECT_EQ(deflater::memory_bound(10, 4), (1u << 12) + (1u << 13) + 6 * 1024);
  EXPECT_EQ(deflater::memory_bound(8, 1), deflater::memory_bound(9, 1));
}

}  // namespace
