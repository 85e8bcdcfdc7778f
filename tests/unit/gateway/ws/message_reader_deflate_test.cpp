// The message reader with permessage-deflate negotiated (RFC 7692).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/buffer_pool.hpp"
#include "common/deflate/deflater.hpp"
#include "gateway/ws/inflater.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/unit/support/message_events.hpp"
#include "tests/unit/support/ws_frames.hpp"

namespace {

using namespace fg::test;
using fg::buffer_pool;
using fg::deflater;
using fg::ws::deflate_params;
using fg::ws::error;
using fg::ws::inflater_pool;
using fg::ws::message_reader;
using fg::ws::reader_options;
using fg::ws::reader_pools;

constexpr std::uint8_t rsv1 = 0x40;

deflate_params negotiated(bool client_takeover = false) {
  deflate_params p;
  p.enabled = true;
  p.client_takeover = client_takeover;
  return p;
}

bytes compressed(const bytes& message, fg::deflate_tuning tuning = {}) {
  deflater d(15, tuning, false);
  fg::byte_buffer out;
  d.compress(message, out);
  return bytes(out.span().begin(), out.span().end());
}

// A compressed message as one frame, or cut into `fragments` frames.
bytes compressed_frames(std::uint8_t op, const bytes& message, std::size_t fragments = 1,
                        fg::deflate_tuning tuning = {}) {
  const bytes c = compressed(message, tuning);
  bytes out;
  const std::size_t step = c.size() / fragments + 1;
  for (std::size_t i = 0, at = 0; i < fragments; ++i) {
    const std::size_t end = i + 1 == fragments ? c.size() : std::min(c.size(), at + step);
    const bytes piece(c.begin() + static_cast<std::ptrdiff_t>(at), c.begin() + static_cast<std::ptrdiff_t>(end));
    out = concat({out, build_frame({.opcode = i == 0 ? op : op_cont,
                                    .fin = i + 1 == fragments,
                                    .rsv = static_cast<std::uint8_t>(i == 0 ? rsv1 : 0)},
                                   piece)});
    at = end;
  }
  return out;
}

// A pool holding one inflater, so that borrowing shows as a drop in
// pooled() (an empty pool would create one instead).
inflater_pool primed_inflaters() {
  inflater_pool pool;
  pool.release(pool.acquire());
  return pool;
}

struct reader_run {
  message_reader reader;
  recording_handler h;
  reader_options opt;
  buffer_pool pool;
  inflater_pool inflaters = primed_inflaters();
  explicit reader_run(deflate_params p = negotiated()) { reader.enable_deflate(p); }
  reader_pools pools() { return {pool, inflaters}; }
  error feed(const bytes& input, std::span<const std::size_t> cuts = {}) {
    return feed_pieces(input, cuts, [&](std::span<std::uint8_t> piece) { return reader.feed(piece, opt, pools(), h); });
  }
};

bytes text_of(std::size_t n) {
  std::string s;
  while (s.size() < n) s += "{\"k\":\"v\xC3\xA9\",\"n\":" + std::to_string(s.size()) + "} ";
  s.resize(n);
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.back() = 'x';
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.back() = 'x';
  return to_bytes(s);
}

TEST(message_reader_deflate, compressed_text_in_every_split) {
  const bytes message = text_of(300);
  const bytes input = concat({compressed_frames(op_text, message), frame(op_ping, "p")});
  for (const auto& cuts : all_splits(input.size(), 0)) {
    reader_run r;
    ASSERT_EQ(r.feed(input, cuts), error::none) << describe(cuts);
    ASSERT_EQ(r.h.events, (std::vector<event>{{"text", message}, ev("ping", "p")})) << describe(cuts);
  }
}

TEST(message_reader_deflate, fragmented_compressed_message_with_controls_between) {
  const bytes message = concat({text_of(2000), pattern(3000)});
  const bytes c = compressed_frames(op_binary, message, 4);
  for (const auto& cuts : std::vector<std::vector<std::size_t>>{{}, {1}, {c.size() / 2}, {5, 6, 7, 300}}) {
    reader_run r;
    ASSERT_EQ(r.feed(concat({frame(op_ping, "a"), c}), cuts), error::none) << describe(cuts);
    ASSERT_EQ(r.h.events, (std::vector<event>{ev("ping", "a"), {"binary", message}}));
  }
}

TEST(message_reader_deflate, uncompressed_messages_stay_zero_copy) {
  reader_run r;
  bytes input = frame(op_text, "plain");
  ASSERT_EQ(r.reader.feed(input, r.opt, r.pools(), r.h), error::none);
  ASSERT_EQ(r.h.events, std::vector<event>{ev("text", "plain")});
  EXPECT_EQ(r.h.message_data[0], input.data() + 6);
  EXPECT_FALSE(r.reader.compressed());
}

TEST(message_reader_deflate, compressed_and_plain_messages_interleave) {
  const bytes a = text_of(500), b = text_of(40);
  reader_run r;
  ASSERT_EQ(r.feed(concat({compressed_frames(op_text, a), frame(op_text, b), compressed_frames(op_text, b),
                           frame(op_binary, pattern(9))})),
            error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{{"text", a}, {"text", b}, {"text", b}, {"binary", pattern(9)}}));
}

TEST(message_reader_deflate, compressed_size_is_told_during_delivery) {
  struct sizing_handler : recording_handler {
    message_reader* reader = nullptr;
    std::vector<std::uint64_t> wire;
    void on_message(fg::ws::opcode op, std::span<std::uint8_t> p) {
      wire.push_back(reader->compressed() ? reader->wire_size() : 0);
      recording_handler::on_message(op, p);
    }
  };
  const bytes message = text_of(4000);
  const bytes c = compressed(message);
  message_reader reader;
  reader.enable_deflate(negotiated());
  sizing_handler h;
  h.reader = &reader;
  bytes input = concat({compressed_frames(op_text, message, 3), frame(op_text, "x")});
  buffer_pool pool;
  inflater_pool inflaters;
  ASSERT_EQ(reader.feed(input, {}, {pool, inflaters}, h), error::none);
  EXPECT_EQ(h.wire, (std::vector<std::uint64_t>{c.size(), 0}));
}

TEST(message_reader_deflate, empty_compressed_messages) {
  // RFC 7692 §7.2.3.6: 0x00, and an empty payload, both inflate to nothing.
  reader_run r;
  ASSERT_EQ(r.feed(concat({build_frame({.opcode = op_text, .rsv = rsv1}, bytes{0x00}),
                           build_frame({.opcode = op_binary, .rsv = rsv1}, {})})),
            error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{ev("text", ""), ev("binary", "")}));
}

TEST(message_reader_deflate, rsv1_is_refused_without_negotiation) {
  message_reader reader;
  recording_handler h;
  bytes input = compressed_frames(op_text, text_of(50));
  buffer_pool pool;
  inflater_pool inflaters;
  EXPECT_EQ(reader.feed(input, {}, {pool, inflaters}, h), error::reserved_bits);
}

TEST(message_reader_deflate, rsv1_on_a_continuation_or_control_frame) {
  // RFC 7692 §6: only a data message's first frame may carry RSV1.
  {
    reader_run r;
    EXPECT_EQ(r.feed(concat({build_frame({.opcode = op_text, .fin = false, .rsv = rsv1}, compressed(text_of(10))),
                             build_frame({.opcode = op_cont, .rsv = rsv1}, {})})),
              error::compressed_continuation);
  }
  {
    reader_run r;
    EXPECT_EQ(r.feed(build_frame({.opcode = op_ping, .rsv = rsv1}, to_bytes("p"))), error::compressed_control_frame);
  }
}

TEST(message_reader_deflate, inflated_text_is_validated) {
  bytes bad = text_of(100);
  bad[50] = 0xFF;
  reader_run r;
  EXPECT_EQ(r.feed(compressed_frames(op_text, bad)), error::invalid_utf8);
  bytes truncated = text_of(100);
  truncated.push_back(0xE2);  // a sequence left open at the end
  reader_run t;
  EXPECT_EQ(t.feed(compressed_frames(op_text, truncated, 2)), error::invalid_utf8);
  reader_run skip;
  skip.opt.validate_utf8 = false;
  EXPECT_EQ(skip.feed(compressed_frames(op_text, bad)), error::none);
  // Binary is never validated.
  reader_run b;
  EXPECT_EQ(b.feed(compressed_frames(op_binary, bad)), error::none);
}

TEST(message_reader_deflate, corrupt_data_fails) {
  reader_run r;
  EXPECT_EQ(r.feed(build_frame({.opcode = op_binary, .rsv = rsv1}, bytes{0xff, 0xff, 0xff})),
            error::invalid_deflate_data);
}

TEST(message_reader_deflate, zip_bomb_fails_before_the_memory_is_spent) {
  const bytes zeros(4 << 20, 0);  // 4 MiB of zeros: about 4 KiB compressed at level 9
  const bytes bomb = compressed_frames(op_binary, zeros, 1, {9, 9});
  ASSERT_LT(bomb.size(), 8u * 1024);
  reader_run r;
  r.opt.limits.max_message_size = 64 * 1024;
  EXPECT_EQ(r.feed(bomb), error::message_too_big);
  EXPECT_TRUE(r.h.events.empty());
}

TEST(message_reader_deflate, inflated_size_of_exactly_the_limit_is_delivered) {
  const bytes message = pattern(20000);
  reader_run r;
  r.opt.limits.max_message_size = message.size();
  ASSERT_EQ(r.feed(compressed_frames(op_binary, message, 3)), error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{{"binary", message}}));
  reader_run over;
  over.opt.limits.max_message_size = message.size() - 1;
  EXPECT_EQ(over.feed(compressed_frames(op_binary, message, 3)), error::message_too_big);
}

TEST(message_reader_deflate, incompressible_message_of_the_limit_grows_on_the_wire_but_is_delivered) {
  bytes random(16384);
  std::uint32_t x = 12345;
  for (auto& b : random) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  const bytes input = compressed_frames(op_binary, random, 2);
  ASSERT_GT(compressed(random).size(), random.size());
  reader_run r;
  r.opt.limits.max_message_size = random.size();
  ASSERT_EQ(r.feed(input), error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{{"binary", random}}));
}

TEST(message_reader_deflate, compressed_wire_limit_is_a_sixteenth_more) {
  EXPECT_EQ(message_reader::compressed_wire_limit(1 << 20), (1u << 20) + (1u << 16) + 64);
  EXPECT_EQ(message_reader::compressed_wire_limit(0), 64u);
  EXPECT_EQ(message_reader::compressed_wire_limit(~std::uint64_t{0}), ~std::uint64_t{0});
}

TEST(message_reader_deflate, client_context_takeover) {
  // RFC 7692 §7.2.3.2: the second message refers to the first one's data.
  reader_run r(negotiated(true));
  ASSERT_EQ(
      r.feed(concat({build_frame({.opcode = op_text, .rsv = rsv1}, bytes{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}),
                     build_frame({.opcode = op_text, .rsv = rsv1}, bytes{0xf2, 0x00, 0x11, 0x00, 0x00})})),
      error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{ev("text", "Hello"), ev("text", "Hello")}));
  // Without takeover each message stands alone: the back reference is corrupt.
  reader_run alone;
  EXPECT_EQ(
      alone.feed(concat({build_frame({.opcode = op_text, .rsv = rsv1}, bytes{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}),
                         build_frame({.opcode = op_text, .rsv = rsv1}, bytes{0xf2, 0x00, 0x11, 0x00, 0x00})})),
      error::invalid_deflate_data);
}

TEST(message_reader_deflate, an_idle_connection_holds_no_inflater_or_buffer) {
  reader_run r;
  auto& inflaters = r.inflaters;
  auto& buffers = r.pool;
  while (buffers.pooled() < 2) buffers.release(fg::byte_buffer(64));
  const std::size_t inflaters_before = inflaters.pooled(), buffers_before = buffers.pooled();
  const bytes input = compressed_frames(op_text, text_of(1000), 2);
  ASSERT_EQ(r.feed(bytes(input.begin(), input.begin() + 30)), error::none);
  EXPECT_EQ(inflaters.pooled(), inflaters_before - 1) << "borrowed for the message";
  EXPECT_EQ(buffers.pooled(), buffers_before - 1);
  ASSERT_EQ(r.feed(bytes(input.begin() + 30, input.end())), error::none);
  EXPECT_EQ(inflaters.pooled(), inflaters_before) << "given back with the message";
  EXPECT_EQ(buffers.pooled(), buffers_before);
  EXPECT_TRUE(r.reader.idle());
  // A message left half-read is given back at teardown.
  ASSERT_EQ(r.feed(bytes(input.begin(), input.begin() + 30)), error::none);
  r.reader.release_buffers(r.pools());
  EXPECT_EQ(inflaters.pooled(), inflaters_before);
  EXPECT_EQ(buffers.pooled(), buffers_before);
}

TEST(message_reader_deflate, a_failed_message_gives_its_inflater_back_at_teardown) {
  reader_run r;
  const std::size_t before = r.inflaters.pooled();
  EXPECT_EQ(r.feed(build_frame({.opcode = op_binary, .rsv = rsv1}, bytes{0xff, 0xff})), error::invalid_deflate_data);
  EXPECT_EQ(r.inflaters.pooled(), before - 1) << "held until the connection is torn down";
  r.reader.release_buffers(r.pools());
  EXPECT_EQ(r.inflaters.pooled(), before);
  // And the next reader on the pool gets a clean one.
  message_reader next;
  next.enable_deflate(negotiated());
  const bytes message = text_of(10);
  bytes input = compressed_frames(op_text, message);
  ASSERT_EQ(next.feed(input, r.opt, r.pools(), r.h), error::none);
  EXPECT_EQ(r.h.events, (std::vector<event>{{"text", message}}));
}

TEST(message_reader_deflate, a_reader_destroyed_without_release_frees_its_inflater) {
  buffer_pool buffers;
  inflater_pool inflaters = primed_inflaters();
  const std::size_t before = inflaters.pooled();
  {
    message_reader r;
    r.enable_deflate(negotiated());
    recording_handler h;
    bytes input = compressed_frames(op_text, text_of(1000), 2);
    input.resize(30);  // the message is left half-read
    ASSERT_EQ(r.feed(input, {}, {buffers, inflaters}, h), error::none);
    EXPECT_EQ(inflaters.pooled(), before - 1);
  }
  EXPECT_EQ(inflaters.pooled(), before - 1) << "the reader does not reach a pool on its own";
}

TEST(message_reader_deflate, borrows_only_from_the_pools_it_is_given) {
  auto& thread_inflaters = inflater_pool::this_thread();
  thread_inflaters.release(thread_inflaters.acquire());
  const std::size_t thread_before = thread_inflaters.pooled();
  reader_run r;
  const bytes input = compressed_frames(op_text, text_of(1000), 2);
  ASSERT_EQ(r.feed(bytes(input.begin(), input.begin() + 30)), error::none);
  EXPECT_EQ(thread_inflaters.pooled(), thread_before);
  ASSERT_EQ(r.feed(bytes(input.begin() + 30, input.end())), error::none);
  EXPECT_EQ(r.inflaters.pooled(), 1u) << "the inflater went back to the pool it came from";
  EXPECT_EQ(thread_inflaters.pooled(), thread_before);
}

}  // namespace
