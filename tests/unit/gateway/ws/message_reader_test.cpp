#include "gateway/ws/message_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/buffer_pool.hpp"
#include "gateway/ws/inflater.hpp"
#include "tests/unit/support/message_events.hpp"
#include "tests/unit/support/ws_frames.hpp"

#include "tests/unit/support/param_name.hpp"

namespace {

FG_PRINT_CASES_BY_NAME()

using namespace fg::test;
using fg::buffer_pool;
using fg::ws::error;
using fg::ws::inflater_pool;
using fg::ws::message_reader;
using fg::ws::opcode;
using fg::ws::reader_options;

struct read_result {
  error err;
  std::vector<event> events;
};

// A pool holding two buffers, so that borrowing shows as a drop in
// pooled() (an empty pool would allocate instead).
buffer_pool primed_pool() {
  buffer_pool pool;
  while (pool.pooled() < 2) pool.release(fg::byte_buffer(64));
  return pool;
}

read_result read_with(buffer_pool& pool, const bytes& input, std::span<const std::size_t> cuts,
                      const reader_options& opt = {}) {
  message_reader r;
  recording_handler h;
  inflater_pool inflaters;  // without deflate, never used
  const error e = feed_pieces(input, cuts, [&](std::span<std::uint8_t> piece) {
    return r.feed(piece, opt, {pool, inflaters}, h);
  });
  return {e, h.events};
}

read_result read(const bytes& input, std::span<const std::size_t> cuts, const reader_options& opt = {}) {
  buffer_pool pool;
  return read_with(pool, input, cuts, opt);
}

// Feeds each of `frames` as its own read into one reader, so a test can
// look between frames.
struct stepper {
  message_reader reader;
  recording_handler h;
  reader_options opt;
  buffer_pool pool = primed_pool();
  inflater_pool inflaters;
  error feed(bytes b) { return reader.feed(b, opt, {pool, inflaters}, h); }
  void release() { reader.release_buffers({pool, inflaters}); }
};

// ---------------------------------------------------------------------------

TEST(message_reader, single_frame_message_is_delivered_in_place) {
  bytes input = frame(op_text, "hello");
  message_reader r;
  recording_handler h;
  buffer_pool pool;
  inflater_pool inflaters;
  ASSERT_EQ(r.feed(input, {}, {pool, inflaters}, h), error::none);
  ASSERT_EQ(h.events, std::vector<event>{ev("text", "hello")});
  // Zero copy: the span points at the payload inside the read buffer.
  EXPECT_EQ(h.message_data[0], input.data() + 6);
}

TEST(message_reader, several_whole_messages_in_one_read_are_each_in_place) {
  bytes input = concat({frame(op_binary, pattern(10)), frame(op_text, "second")});
  message_reader r;
  recording_handler h;
  buffer_pool pool;
  inflater_pool inflaters;
  ASSERT_EQ(r.feed(input, {}, {pool, inflaters}, h), error::none);
  ASSERT_EQ(h.message_data.size(), 2u);
  EXPECT_EQ(h.message_data[0], input.data() + 6);
  EXPECT_EQ(h.message_data[1], input.data() + 6 + 10 + 6);
  EXPECT_EQ(h.events[0].payload, pattern(10));
}

TEST(message_reader, fragmented_message_is_reassembled) {
  const bytes input =
      concat({frame(op_binary, pattern(3), false), frame(op_cont, "", false), frame(op_cont, pattern(200, 7))});
  const read_result r = read(input, {});
  ASSERT_EQ(r.err, error::none);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], (event{"binary", concat({pattern(3), pattern(200, 7)})}));
}

TEST(message_reader, control_frames_between_fragments_are_delivered_at_once) {
  stepper s;
  ASSERT_EQ(s.feed(frame(op_text, "Hel", false)), error::none);
  EXPECT_TRUE(s.h.events.empty());
  ASSERT_EQ(s.feed(frame(op_ping, "p")), error::none);
  EXPECT_EQ(s.h.events, std::vector<event>{ev("ping", "p")});
  ASSERT_EQ(s.feed(frame(op_cont, "lo", false)), error::none);
  ASSERT_EQ(s.feed(frame(op_pong, "q")), error::none);
  EXPECT_EQ(s.h.events.size(), 2u);
  ASSERT_EQ(s.feed(frame(op_cont, "!")), error::none);
  EXPECT_EQ(s.h.events, (std::vector<event>{ev("ping", "p"), ev("pong", "q"), ev("text", "Hello!")}));
}

bytes conversation() {
  return concat({frame(op_text, "H\xC3", false), frame(op_ping, "p1"), frame(op_cont, "\xA9llo \xE2\x82", false),
                 frame(op_pong, ""), frame(op_cont, "", false), frame(op_cont, "\xAC!"),
                 frame(op_binary, bytes{0xFF, 0x00, 0xC0}), frame(op_text, ""), frame(op_ping, ""), frame(op_text, "x"),
                 frame(op_close, close_payload(1001, "bye \xF0\x9F\x91\x8B"))});
}

TEST(message_reader, same_messages_for_every_split) {
  const bytes input = conversation();
  const std::vector<event> expected{ev("ping", "p1"),
                                    ev("pong", ""),
                                    ev("text", "H\xC3\xA9llo \xE2\x82\xAC!"),
                                    {"binary", {0xFF, 0x00, 0xC0}},
                                    ev("text", ""),
                                    ev("ping", ""),
                                    ev("text", "x"),
                                    ev("close", "bye \xF0\x9F\x91\x8B", 1001)};
  for (const auto& cuts : all_splits(input.size(), input.size())) {
    const read_result r = read(input, cuts);
    ASSERT_EQ(r.err, error::none) << describe(cuts) << " " << fg::ws::to_string(r.err);
    ASSERT_EQ(r.events, expected) << describe(cuts);
  }
}

// ---------------------------------------------------------------------------
// UTF-8 across fragments and reads.

TEST(message_reader_utf8, sequence_split_across_fragments_accepted) {
  const bytes input = concat({frame(op_text, "\xE2", false), frame(op_cont, "\x82", false), frame(op_cont, "\xAC")});
  for (const auto& cuts : all_splits(input.size())) {
    const read_result r = read(input, cuts);
    ASSERT_EQ(r.err, error::none) << describe(cuts);
    EXPECT_EQ(r.events, std::vector<event>{ev("text", "\xE2\x82\xAC")});
  }
}

TEST(message_reader_utf8, fails_on_the_first_bad_fragment_before_the_last_is_fed) {
  stepper s;
  ASSERT_EQ(s.feed(frame(op_text, "fine \xC3\xA9", false)), error::none);
  EXPECT_EQ(s.feed(frame(op_cont, "bad \xC0\x80", false)), error::invalid_utf8);
  EXPECT_EQ(s.feed(frame(op_cont, "end")), error::invalid_utf8) << "sticky";
  EXPECT_TRUE(s.h.events.empty());
}

TEST(message_reader_utf8, fails_within_a_frame_before_its_end_arrives) {
  // The bad byte is the 4th payload byte of a 40-byte frame: the read that
  // carries it must fail, long before the frame is complete.
  bytes payload(40, 'a');
  payload[3] = 0xFF;
  const bytes input = frame(op_text, payload);
  message_reader r;
  recording_handler h;
  bytes first(input.begin(), input.begin() + 6 + 4);
  buffer_pool pool;
  inflater_pool inflaters;
  EXPECT_EQ(r.feed(first, {}, {pool, inflaters}, h), error::invalid_utf8);
}

TEST(message_reader_utf8, invalid_in_a_single_frame_rejected_in_every_split) {
  const bytes input = concat({frame(op_ping, "p"), frame(op_text, "ab\xED\xA0\x80")});
  for (const auto& cuts : all_splits(input.size())) {
    const read_result r = read(input, cuts);
    EXPECT_EQ(r.err, error::invalid_utf8) << describe(cuts);
    EXPECT_EQ(r.events, std::vector<event>{ev("ping", "p")}) << describe(cuts);
  }
}

TEST(message_reader_utf8, truncated_at_the_end_of_the_message_rejected) {
  for (const bytes& input :
       {frame(op_text, "a\xE2\x82"), concat({frame(op_text, "a\xF0\x9F", false), frame(op_cont, "\x98")}),
        concat({frame(op_text, "\xC3", false), frame(op_cont, "")})}) {
    for (const auto& cuts : all_splits(input.size())) {
      const read_result r = read(input, cuts);
      EXPECT_EQ(r.err, error::invalid_utf8) << describe(cuts);
      EXPECT_TRUE(r.events.empty()) << describe(cuts);
    }
  }
}

TEST(message_reader_utf8, validation_restarts_with_each_message) {
  // Binary bytes never reach the validator, and a text message starts from
  // a fresh state: a sequence opened in binary cannot be completed in text,
  // and invalid binary does not fail the text after it.
  const bytes input = concat({frame(op_binary, "\xE2"), frame(op_text, "\x82\xAC")});
  EXPECT_EQ(read(input, {}).err, error::invalid_utf8);
  const bytes ok = concat({frame(op_binary, "\xFF"), frame(op_text, "ok")});
  EXPECT_EQ(read(ok, {}).err, error::none);
}

TEST(message_reader_utf8, binary_is_not_validated) {
  const read_result r = read(frame(op_binary, "\xFF\xC0"), {});
  EXPECT_EQ(r.err, error::none);
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(message_reader_utf8, validate_utf8_false_skips_the_check) {
  reader_options opt;
  opt.validate_utf8 = false;
  const bytes input = concat({frame(op_text, "\xFF", false), frame(op_cont, "\xE2")});
  for (const auto& cuts : all_splits(input.size())) {
    const read_result r = read(input, cuts, opt);
    EXPECT_EQ(r.err, error::none) << describe(cuts);
    EXPECT_EQ(r.events, std::vector<event>{ev("text", "\xFF\xE2")}) << describe(cuts);
  }
}

// ---------------------------------------------------------------------------
// Close payloads (RFC 6455 §5.5.1, §7.4), each whole and in every split so
// the borrowed-buffer path for a split control frame is covered too.

struct close_case {
  std::string name;
  bytes payload;
  error expected;
  std::uint16_t code;  // reported code when accepted
  std::string reason;
};

std::vector<close_case> close_cases() {
  std::vector<close_case> v{
      {"empty_reports_1005", {}, error::none, 1005, ""},
      {"one_byte", {0x03}, error::invalid_close_payload, 0, ""},
      {"bad_utf8_reason", close_payload(1000, "ok \xC0\xAF"), error::invalid_close_reason, 0, ""},
      {"truncated_utf8_reason", close_payload(1000, "\xE2\x82"), error::invalid_close_reason, 0, ""},
      {"max_length_reason", close_payload(1000, std::string(123, 'r')), error::none, 1000, std::string(123, 'r')},
  };
  for (int code : {0, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 1100, 2000, 2999, 5000, 65535})
    v.push_back({"invalid_code_" + std::to_string(code), close_payload(static_cast<std::uint16_t>(code), "r"),
                 error::invalid_close_code, 0, ""});
  for (int code : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999}) {
    v.push_back({"valid_code_" + std::to_string(code), close_payload(static_cast<std::uint16_t>(code)), error::none,
                 static_cast<std::uint16_t>(code), ""});
    v.push_back({"valid_code_" + std::to_string(code) + "_with_reason",
                 close_payload(static_cast<std::uint16_t>(code), "d\xC3\xA9j\xC3\xA0 vu \xE2\x9C\x93"), error::none,
                 static_cast<std::uint16_t>(code), "d\xC3\xA9j\xC3\xA0 vu \xE2\x9C\x93"});
  }
  return v;
}

class message_reader_close : public ::testing::TestWithParam<close_case> {};

TEST_P(message_reader_close, checked_in_every_split) {
  const close_case& c = GetParam();
  const bytes input = frame(op_close, c.payload);
  for (const auto& cuts : all_splits(input.size(), 24)) {
    const read_result r = read(input, cuts);
    ASSERT_EQ(r.err, c.expected) << describe(cuts) << " got " << fg::ws::to_string(r.err);
    if (c.expected == error::none)
      EXPECT_EQ(r.events, std::vector<event>{ev("close", c.reason, c.code)}) << describe(cuts);
    else
      EXPECT_TRUE(r.events.empty()) << describe(cuts);
  }
}

TEST_P(message_reader_close, checked_between_fragments) {
  const close_case& c = GetParam();
  const bytes input = concat({frame(op_text, "a", false), frame(op_close, c.payload)});
  const read_result r = read(input, {});
  EXPECT_EQ(r.err, c.expected);
}

INSTANTIATE_TEST_SUITE_P(payloads, message_reader_close, ::testing::ValuesIn(close_cases()), fg::test::param_name{});

// ---------------------------------------------------------------------------
// Buffers are borrowed only while needed and given back.

TEST(message_reader_pool, whole_message_borrows_nothing) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  ASSERT_EQ(s.feed(frame(op_text, "whole")), error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_TRUE(s.reader.idle());
}

TEST(message_reader_pool, fragmented_message_returns_its_buffer) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  ASSERT_EQ(s.feed(frame(op_text, "one", false)), error::none);
  EXPECT_EQ(s.pool.pooled(), before - 1);
  EXPECT_FALSE(s.reader.idle());
  ASSERT_EQ(s.feed(frame(op_cont, "two", false)), error::none);
  EXPECT_EQ(s.pool.pooled(), before - 1) << "one buffer per message, not per fragment";
  ASSERT_EQ(s.feed(frame(op_cont, "three")), error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_TRUE(s.reader.idle());
  EXPECT_EQ(s.h.events, std::vector<event>{ev("text", "onetwothree")});
}

TEST(message_reader_pool, message_split_across_reads_returns_its_buffer) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  const bytes input = frame(op_binary, pattern(50));
  ASSERT_EQ(s.feed(bytes(input.begin(), input.begin() + 20)), error::none);
  EXPECT_FALSE(s.reader.idle());
  EXPECT_EQ(s.pool.pooled(), before - 1);
  ASSERT_EQ(s.feed(bytes(input.begin() + 20, input.end())), error::none);
  EXPECT_TRUE(s.reader.idle());
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_EQ(s.h.events, (std::vector<event>{{"binary", pattern(50)}}));
}

TEST(message_reader_pool, split_control_frame_inside_a_message_shares_its_buffer) {
  // One buffer handle per reader (an idle connection's bytes): the control
  // frame is gathered behind the message's bytes and cut off again.
  stepper s;
  const std::size_t before = s.pool.pooled();
  ASSERT_EQ(s.feed(frame(op_text, "a", false)), error::none);
  const bytes ping = frame(op_ping, "ping!");
  ASSERT_EQ(s.feed(bytes(ping.begin(), ping.begin() + 8)), error::none);
  EXPECT_EQ(s.pool.pooled(), before - 1);
  ASSERT_EQ(s.feed(bytes(ping.begin() + 8, ping.end())), error::none);
  EXPECT_EQ(s.pool.pooled(), before - 1);
  ASSERT_EQ(s.feed(frame(op_cont, "b")), error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_TRUE(s.reader.idle());
  EXPECT_EQ(s.h.events, (std::vector<event>{ev("ping", "ping!"), ev("text", "ab")}));
}

TEST(message_reader_pool, split_control_frame_alone_returns_its_buffer) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  const bytes pong = frame(op_pong, "pong!");
  ASSERT_EQ(s.feed(bytes(pong.begin(), pong.begin() + 8)), error::none);  // header (6 bytes) and 2 of 5
  EXPECT_EQ(s.pool.pooled(), before - 1);
  ASSERT_EQ(s.feed(bytes(pong.begin() + 8, pong.end())), error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  // The next message is whole again: delivered in place, nothing borrowed.
  ASSERT_EQ(s.feed(frame(op_text, "next")), error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_EQ(s.h.events, (std::vector<event>{ev("pong", "pong!"), ev("text", "next")}));
}

TEST(message_reader_pool, split_control_frames_between_split_fragments_keep_the_message) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  const bytes input =
      concat({frame(op_binary, pattern(40), false), frame(op_ping, pattern(125)), frame(op_cont, pattern(30, 3), false),
              frame(op_pong, pattern(60, 5)), frame(op_cont, pattern(20, 9))});
  // Cut every frame in two, so each one spans reads.
  for (std::size_t at = 0; at < input.size(); at += 17)
    ASSERT_EQ(s.feed(bytes(input.begin() + static_cast<std::ptrdiff_t>(at),
                           input.begin() + static_cast<std::ptrdiff_t>(std::min(at + 17, input.size())))),
              error::none);
  EXPECT_EQ(s.pool.pooled(), before);
  EXPECT_TRUE(s.reader.idle());
  EXPECT_EQ(s.h.events, (std::vector<event>{{"ping", pattern(125)},
                                            {"pong", pattern(60, 5)},
                                            {"binary", concat({pattern(40), pattern(30, 3), pattern(20, 9)})}}));
}

TEST(message_reader_pool, half_a_header_is_not_idle) {
  stepper s;
  const bytes f = frame(op_text, "x");
  ASSERT_EQ(s.feed(bytes(f.begin(), f.begin() + 1)), error::none);
  EXPECT_FALSE(s.reader.idle());
  ASSERT_EQ(s.feed(bytes(f.begin() + 1, f.end())), error::none);
  EXPECT_TRUE(s.reader.idle());
}

TEST(message_reader_pool, failed_message_buffer_returned_on_release) {
  stepper s;
  const std::size_t before = s.pool.pooled();
  ASSERT_EQ(s.feed(frame(op_text, "ok", false)), error::none);
  ASSERT_EQ(s.feed(frame(op_cont, "\xFF")), error::invalid_utf8);
  EXPECT_EQ(s.pool.pooled(), before - 1);
  s.release();
  EXPECT_EQ(s.pool.pooled(), before);
  s.release();  // twice is harmless
  EXPECT_EQ(s.pool.pooled(), before);
}

TEST(message_reader_pool, a_reader_destroyed_without_release_frees_its_buffer) {
  buffer_pool pool = primed_pool();
  inflater_pool inflaters;
  const std::size_t before = pool.pooled();
  {
    message_reader r;
    recording_handler h;
    bytes input = frame(op_binary, "ok", false);
    ASSERT_EQ(r.feed(input, {}, {pool, inflaters}, h), error::none);
    EXPECT_EQ(pool.pooled(), before - 1);
  }
  EXPECT_EQ(pool.pooled(), before - 1) << "the reader does not reach a pool on its own";
}

TEST(message_reader_pool, many_messages_do_not_drain_the_pool) {
  buffer_pool pool = primed_pool();
  const std::size_t before = pool.pooled();
  const bytes one = concat({frame(op_text, "a", false), frame(op_ping, ""), frame(op_cont, "b")});
  bytes input;
  for (int i = 0; i < 50; ++i) input = concat({input, one});
  for (const auto& cuts : std::vector<std::vector<std::size_t>>{{}, {7}, {1, 2, 3, 100, 101}}) {
    const read_result r = read_with(pool, input, cuts);
    EXPECT_EQ(r.err, error::none);
    EXPECT_EQ(r.events.size(), 100u);
    EXPECT_EQ(pool.pooled(), before) << describe(cuts);
  }
}

}  // namespace
