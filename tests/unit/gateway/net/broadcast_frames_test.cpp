// broadcast_frames with a publisher's compression (worker --publish-deflate):
// which recipients get it, that it is built once and inflates to the
// payload, and that the gateway's own rules (threshold, not smaller) still
// decide.
#include "gateway/net/broadcast_frames.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/deflate/deflater.hpp"
#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/net/message_compressor.hpp"
#include "tests/unit/support/raw_inflate.hpp"

namespace {

using fg::byte_buffer;
using fg::deflated_prefix;
using fg::gateway::broadcast_frames;
using fg::gateway::message_compressor;
using fg::gateway::thread_counters;
namespace ws = fg::ws;

std::span<const std::uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A JSON room delivery of about `size` bytes, compressible.
std::string delivery(std::size_t size) {
  std::string data;
  for (int i = 0; data.size() < size; ++i) data += "{\"id\":" + std::to_string(i) + ",\"name\":\"member\"},";
  return "{\"room\":\"r\",\"data\":[" + data + "0],\"offset\":7}";
}

ws::deflate_params deflate_with(int server_bits) {
  ws::deflate_params p;
  p.enabled = true;
  p.server_window_bits = static_cast<std::uint8_t>(server_bits);
  return p;
}

struct frame {
  bool rsv1 = false;
  std::string payload;
};

// A server frame of any length (unmasked).
frame parse(std::span<const std::uint8_t> f) {
  frame out;
  out.rsv1 = (f[0] & 0x40) != 0;
  std::size_t len = f[1] & 0x7F, at = 2;
  if (len == 126) {
    len = (std::size_t{f[2]} << 8) | f[3];
    at = 4;
  } else if (len == 127) {
    len = 0;
    for (int i = 0; i < 8; ++i) len = (len << 8) | f[2 + i];
    at = 10;
  }
  EXPECT_EQ(at + len, f.size());
  out.payload.assign(f.begin() + static_cast<std::ptrdiff_t>(at), f.end());
  return out;
}

std::string inflate(const std::string& payload, int bits) { return fg::test::inflate_text(payload, bits); }

class BroadcastFramesTest : public ::testing::Test {
 protected:
  // The publisher's part: every byte but the last, as the rooms app says.
  void publish(const std::string& payload) {
    payload_ = payload;
    segment_.clear();
    fg::deflater d(15, {}, false);
    d.compress(span_of(payload_).first(payload_.size() - 1), segment_);
    frames_.reset(ws::opcode::text, span_of(payload_), {segment_.span(), payload_.size() - 1, 15});
  }

  ws::deflate_options options_{true, 1024};
  thread_counters counters_;
  message_compressor compressor_{options_, counters_};
  broadcast_frames frames_{compressor_};
  std::string payload_;
  byte_buffer segment_;
};

TEST_F(BroadcastFramesTest, AWideWindowGetsThePublishersCompressionBuiltOnce) {
  publish(delivery(4000));
  const auto first = frames_.frame_for(deflate_with(15));
  const frame f = parse(first);
  ASSERT_TRUE(f.rsv1);
  EXPECT_EQ(inflate(f.payload, 15), payload_);
  EXPECT_EQ(f.payload.substr(0, segment_.size()), std::string(segment_.span().begin(), segment_.span().end()));
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 1u);
  EXPECT_EQ(counters_.deflate_messages_out, 1u);
  const auto again = frames_.frame_for(deflate_with(15));
  EXPECT_EQ(again.data(), first.data()) << "the same bytes for every recipient";
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 1u);
}

TEST_F(BroadcastFramesTest, ANarrowWindowIsCompressedHereAndPlainStaysPlain) {
  publish(delivery(4000));
  const frame narrow = parse(frames_.frame_for(deflate_with(9)));
  ASSERT_TRUE(narrow.rsv1);
  EXPECT_EQ(inflate(narrow.payload, 9), payload_);
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 0u) << "a 15-bit segment does not fit a 9-bit window";
  EXPECT_EQ(counters_.deflate_messages_out, 1u);
  const frame plain = parse(frames_.frame_for({}));
  EXPECT_FALSE(plain.rsv1);
  EXPECT_EQ(plain.payload, payload_);
}

TEST_F(BroadcastFramesTest, ASmallMessageFitsEveryWindowButTheThresholdStillApplies) {
  options_.threshold = 100;
  publish(delivery(300));  // under 512 bytes: any window of 9 bits or more holds it
  ASSERT_LE(payload_.size(), 512u);
  const frame narrow = parse(frames_.frame_for(deflate_with(9)));
  ASSERT_TRUE(narrow.rsv1);
  EXPECT_EQ(inflate(narrow.payload, 9), payload_);
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 1u);

  options_.threshold = 1024;
  publish(delivery(300));
  EXPECT_FALSE(parse(frames_.frame_for(deflate_with(15))).rsv1) << "below --deflate-threshold";
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 1u);
  EXPECT_EQ(counters_.deflate_skipped, 1u);
}

TEST_F(BroadcastFramesTest, ACompressionThatIsNotSmallerGoesPlain) {
  options_.threshold = 0;
  payload_ = delivery(2000);
  // A "segment" as long as the payload: the frame would grow.
  const std::string fat(payload_.size(), '\x01');
  frames_.reset(ws::opcode::text, span_of(payload_), {span_of(fat), payload_.size() - 1, 15});
  const frame f = parse(frames_.frame_for(deflate_with(15)));
  EXPECT_FALSE(f.rsv1);
  EXPECT_EQ(f.payload, payload_);
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 0u);
  EXPECT_EQ(counters_.deflate_skipped, 1u);
}

TEST_F(BroadcastFramesTest, WithoutAPublishersCompressionTheGatewayCompressesOnce) {
  payload_ = delivery(4000);
  frames_.reset(ws::opcode::text, span_of(payload_));
  const frame f = parse(frames_.frame_for(deflate_with(15)));
  ASSERT_TRUE(f.rsv1);
  EXPECT_EQ(inflate(f.payload, 15), payload_);
  (void)frames_.frame_for(deflate_with(15));
  EXPECT_EQ(counters_.deflate_messages_out, 1u);
  EXPECT_EQ(counters_.deflate_messages_from_publisher, 0u);
}

}  // namespace
