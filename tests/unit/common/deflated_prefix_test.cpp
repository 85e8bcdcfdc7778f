// A message compressed once at its publisher: the segment (a prefix,
// compressed and sync-flushed) followed by the rest of the message in a
// stored block must inflate, with zlib's own raw inflater, to exactly the
// whole message.
#include "common/deflate/deflated_prefix.hpp"

#include <gtest/gtest.h>

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflater.hpp"
#include "tests/unit/support/raw_inflate.hpp"

namespace {

using bytes = std::vector<std::uint8_t>;
using fg::append_deflated_message;
using fg::byte_buffer;
using fg::deflated_message_size;
using fg::deflated_prefix;
using fg::deflater;

bytes to_bytes(std::string_view s) { return bytes(s.begin(), s.end()); }
bytes bytes_of(const byte_buffer& b) { return bytes(b.span().begin(), b.span().end()); }

bytes json_like(std::size_t size) {
  std::string s;
  for (int i = 0; s.size() < size; ++i)
    s += R"({"room":"lobby","user":"u)" + std::to_string(i % 97) + R"(","text":"hello there","seq":)" +
         std::to_string(i) + "},";
  return to_bytes(s.substr(0, size));
}

bytes random_bytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// What a publisher makes: message[0, covers) compressed with a 15-bit
// window, without context, sync-flushed, without the final 00 00 ff ff.
bytes segment_of(const bytes& message, std::size_t covers, int window_bits = 15) {
  deflater d(window_bits, {}, false);
  byte_buffer out;
  d.compress(std::span<const std::uint8_t>(message).first(covers), out);
  return bytes_of(out);
}

std::optional<bytes> inflate_message(const bytes& payload, int window_bits = 15, std::size_t limit = 1 << 24) {
  return fg::test::inflate_message(payload, window_bits, limit);
}

// The publisher's segment plus the gateway's suffix, as appended.
bytes deflated_message(const bytes& message, std::size_t covers, int window_bits = 15) {
  const bytes segment = segment_of(message, covers, window_bits);
  byte_buffer out;
  EXPECT_TRUE(append_deflated_message(segment, std::span<const std::uint8_t>(message).subspan(covers), out));
  return bytes_of(out);
}

std::vector<std::size_t> split_points(std::size_t size) {
  std::vector<std::size_t> out{0, size / 2, size};
  if (size >= 1) out.insert(out.end(), {1, size - 1});
  return out;
}

struct named_message {
  std::string name;
  bytes message;
};

std::vector<named_message> messages() {
  std::vector<named_message> out;
  for (std::size_t size : {1, 2, 13, 100, 511, 512, 513, 1000, 4096, 8192})
    out.push_back({"json " + std::to_string(size), json_like(size)});
  out.push_back({"json 70 KiB", json_like(70 * 1024)});
  for (std::size_t size : {1, 7, 300, 5000})
    out.push_back({"random " + std::to_string(size), random_bytes(size, size)});
  // A rooms delivery: the publisher covers all but its last byte.
  const bytes body = json_like(900);
  bytes delivery = to_bytes(R"({"type":"message","room":"lobby","data":")");
  delivery.insert(delivery.end(), body.begin(), body.end());
  const bytes tail = to_bytes(R"(","offset":123456})");
  delivery.insert(delivery.end(), tail.begin(), tail.end());
  out.push_back({"delivery", delivery});
  return out;
}

TEST(DeflatedPrefix, SegmentAndStoredSuffixInflateToTheWholeMessage) {
  int checked = 0;
  for (const auto& [name, message] : messages()) {
    for (const std::size_t covers : split_points(message.size())) {
      if (message.size() - covers > fg::max_stored_suffix) continue;  // 70 KiB: from the middle on
      const auto got = inflate_message(deflated_message(message, covers));
      ASSERT_TRUE(got.has_value()) << name << ", covers " << covers;
      ASSERT_EQ(*got, message) << name << ", covers " << covers;
      ++checked;
    }
  }
  EXPECT_GE(checked, 70);
}

TEST(DeflatedPrefix, TheSuffixIsStoredVerbatim) {
  const bytes message = json_like(2000);
  const std::size_t covers = 1500;
  const bytes segment = segment_of(message, covers);
  const bytes out = deflated_message(message, covers);
  ASSERT_EQ(out.size(), segment.size() + 4 + 500 + 1);
  EXPECT_EQ(bytes(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(segment.size())), segment);
  // LEN and NLEN, little-endian: 500 = 0x01f4.
  EXPECT_EQ(out[segment.size()], 0xf4);
  EXPECT_EQ(out[segment.size() + 1], 0x01);
  EXPECT_EQ(out[segment.size() + 2], 0x0b);
  EXPECT_EQ(out[segment.size() + 3], 0xfe);
  EXPECT_EQ(bytes(out.begin() + static_cast<std::ptrdiff_t>(segment.size() + 4), out.end() - 1),
            bytes(message.begin() + static_cast<std::ptrdiff_t>(covers), message.end()));
  EXPECT_EQ(out.back(), 0x00);
}

TEST(DeflatedPrefix, TheInflateCheckNoticesAWrongStoredHeader) {
  // The round trip above can fail: the same bytes with NLEN or LEN off by
  // one, or the trailing empty block header left out, do not inflate to
  // the message.
  const bytes message = json_like(3000);
  const std::size_t covers = 2000;
  const bytes good = deflated_message(message, covers);
  ASSERT_EQ(inflate_message(good), message);
  const std::size_t at = segment_of(message, covers).size();
  for (const std::size_t i : {at, at + 1, at + 2, at + 3}) {
    bytes bad = good;
    bad[i] ^= 0x01;
    const auto got = inflate_message(bad);
    EXPECT_TRUE(!got.has_value() || *got != message) << "byte " << i - at << " of LEN/NLEN";
  }
  bytes no_trailer(good.begin(), good.end() - 1);
  const auto got = inflate_message(no_trailer);
  EXPECT_TRUE(!got.has_value() || *got != message) << "without the empty stored block";
}

TEST(DeflatedPrefix, AnEmptySuffixIsTheSegmentAlone) {
  for (const bytes& message : {json_like(1), json_like(3000), random_bytes(700, 3)}) {
    const bytes segment = segment_of(message, message.size());
    byte_buffer out;
    ASSERT_TRUE(append_deflated_message(segment, {}, out));
    EXPECT_EQ(bytes_of(out), segment);
    EXPECT_EQ(inflate_message(bytes_of(out)), message);
  }
}

TEST(DeflatedPrefix, AppendsAfterWhatTheBufferHolds) {
  const bytes message = json_like(600);
  const bytes segment = segment_of(message, 400);
  byte_buffer out;
  out.append("xy", 2);
  ASSERT_TRUE(append_deflated_message(segment, std::span<const std::uint8_t>(message).subspan(400), out));
  const bytes all = bytes_of(out);
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0], 'x');
  EXPECT_EQ(all[1], 'y');
  EXPECT_EQ(inflate_message(bytes(all.begin() + 2, all.end())), message);
}

TEST(DeflatedPrefix, ASuffixUpToOneStoredBlockFitsAndNoMore) {
  const bytes message = json_like(1000 + fg::max_stored_suffix + 1);
  const std::size_t covers = 1000;
  const bytes segment = segment_of(message, covers);
  const std::span<const std::uint8_t> all(message);

  // 65535 bytes: the largest stored block.
  const bytes fits(message.begin(), message.end() - 1);
  byte_buffer out;
  ASSERT_TRUE(append_deflated_message(segment, std::span<const std::uint8_t>(fits).subspan(covers), out));
  EXPECT_EQ(out.size(), deflated_message_size(segment.size(), 65535));
  EXPECT_EQ(inflate_message(bytes_of(out)), fits);

  // 65536 bytes: refused, and the buffer is left as it was.
  byte_buffer refused;
  refused.append("ab", 2);
  ASSERT_EQ(all.size() - covers, 65536u);
  EXPECT_FALSE(append_deflated_message(segment, all.subspan(covers), refused));
  EXPECT_EQ(bytes_of(refused), to_bytes("ab"));
}

TEST(DeflatedPrefix, AnEmptySegmentIsRefused) {
  const bytes suffix = to_bytes("hello");
  byte_buffer out;
  EXPECT_FALSE(append_deflated_message({}, suffix, out));
  EXPECT_EQ(out.size(), 0u);
  EXPECT_FALSE(append_deflated_message({}, {}, out));
  EXPECT_EQ(out.size(), 0u);
}

TEST(DeflatedPrefix, DeflatedMessageSizeIsWhatIsAppended) {
  EXPECT_EQ(deflated_message_size(7, 0), 7u);
  EXPECT_EQ(deflated_message_size(7, 1), 7u + 4 + 1 + 1);
  const bytes message = json_like(5000);
  for (const std::size_t covers :
       {std::size_t{0}, std::size_t{1}, std::size_t{2500}, std::size_t{4999}, std::size_t{5000}}) {
    const bytes segment = segment_of(message, covers);
    byte_buffer out;
    out.append("z", 1);
    ASSERT_TRUE(append_deflated_message(segment, std::span<const std::uint8_t>(message).subspan(covers), out));
    EXPECT_EQ(out.size() - 1, deflated_message_size(segment.size(), message.size() - covers)) << covers;
  }
}

TEST(DeflatedPrefix, FitsWindow) {
  const bytes segment{0x00};
  // Compressed with 15 bits: fits every receiver with 15 bits.
  EXPECT_TRUE((deflated_prefix{segment, 100000, 15}.fits_window(15)));
  EXPECT_TRUE((deflated_prefix{segment, 513, 15}.fits_window(15)));
  // A smaller receiver window holds every distance only when the segment
  // covers no more than the window.
  EXPECT_FALSE((deflated_prefix{segment, 513, 15}.fits_window(9)));
  EXPECT_FALSE((deflated_prefix{segment, 100000, 15}.fits_window(9)));
  EXPECT_TRUE((deflated_prefix{segment, 512, 15}.fits_window(9)));
  EXPECT_TRUE((deflated_prefix{segment, 1, 15}.fits_window(9)));
  EXPECT_TRUE((deflated_prefix{segment, 256, 15}.fits_window(8)));
  EXPECT_FALSE((deflated_prefix{segment, 257, 15}.fits_window(8)));
  EXPECT_TRUE((deflated_prefix{segment, 1024, 15}.fits_window(10)));
  EXPECT_FALSE((deflated_prefix{segment, 1025, 15}.fits_window(10)));
  // A segment made with a smaller window fits that window and larger ones.
  EXPECT_TRUE((deflated_prefix{segment, 100000, 10}.fits_window(10)));
  EXPECT_TRUE((deflated_prefix{segment, 100000, 10}.fits_window(15)));
  EXPECT_FALSE((deflated_prefix{segment, 100000, 10}.fits_window(9)));
  // The default is the publisher's 15 bits.
  EXPECT_EQ(deflated_prefix{}.window_bits, 15);
  EXPECT_FALSE(deflated_prefix{}.present());
  EXPECT_TRUE((deflated_prefix{segment, 1}.present()));
}

TEST(DeflatedPrefix, ASmallReceiverWindowReadsASegmentCoveringNoMoreThanIt) {
  // Compressed with 15 bits, but covering at most 512 bytes: no distance
  // exceeds 512, so a 9-bit (and, for 256, an 8-bit) inflater reads it.
  for (const auto& [name, message] : messages()) {
    for (const int receiver : {8, 9, 10}) {
      const std::size_t window = std::size_t{1} << receiver;
      for (const std::size_t covers : {std::size_t{0}, std::size_t{1}, window / 2, window - 1, window}) {
        if (covers > message.size() || message.size() - covers > fg::max_stored_suffix) continue;
        const bytes segment = segment_of(message, covers);
        ASSERT_TRUE((deflated_prefix{segment, covers, 15}.fits_window(receiver)));
        const auto got = inflate_message(deflated_message(message, covers), receiver);
        ASSERT_TRUE(got.has_value()) << name << ", covers " << covers << ", receiver " << receiver;
        ASSERT_EQ(*got, message) << name << ", covers " << covers << ", receiver " << receiver;
      }
    }
  }
}

TEST(DeflatedPrefix, TheSmallWindowCheckCanFail) {
  // The converse, so the test above is not vacuous: a 15-bit segment of a
  // repetitive message longer than the receiver's window uses distances
  // the receiver does not have, and zlib refuses it ("invalid distance too
  // far back").
  bytes message;
  const bytes block = random_bytes(600, 9);
  for (int i = 0; i < 4; ++i) message.insert(message.end(), block.begin(), block.end());
  ASSERT_FALSE((deflated_prefix{segment_of(message, message.size()), message.size(), 15}.fits_window(9)));
  EXPECT_FALSE(inflate_message(deflated_message(message, message.size()), 9).has_value());
  EXPECT_EQ(inflate_message(deflated_message(message, message.size()), 15), message);
}

}  // namespace
