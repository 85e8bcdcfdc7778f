#include "gateway/ws/frame_parser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tests/unit/support/ws_frames.hpp"

#include "tests/unit/support/param_name.hpp"

namespace {

FG_PRINT_CASES_BY_NAME()

using namespace fg::test;
using fg::ws::error;
using fg::ws::frame_parser;
using fg::ws::opcode;
using fg::ws::parser_limits;

struct recorded_frame {
  opcode op;
  bool fin;
  bool rsv1;
  std::uint64_t length;
  bytes payload;
  bool done = false;
  bool operator==(const recorded_frame&) const = default;
};

std::ostream& operator<<(std::ostream& os, const recorded_frame& f) {
  return os << "{op " << int(f.op) << " fin " << f.fin << " rsv1 " << f.rsv1 << " len " << f.length << " got "
            << f.payload.size() << " done " << f.done << "}";
}

// Records frames and checks the handler contract as it goes: data only
// inside a begun frame, at most `length` bytes, done exactly at the end.
struct recording_handler {
  std::vector<recorded_frame> frames;
  int contract_violations = 0;
  error fail_begin_with = error::none;

  error on_frame_begin(const fg::ws::frame_header& h) {
    if (!frames.empty() && !frames.back().done) ++contract_violations;
    frames.push_back({h.op, h.fin, h.rsv1, h.length, {}});
    return fail_begin_with;
  }
  error on_frame_data(std::span<std::uint8_t> data, bool frame_done) {
    if (frames.empty() || frames.back().done) {
      ++contract_violations;
      return error::none;
    }
    auto& f = frames.back();
    f.payload.insert(f.payload.end(), data.begin(), data.end());
    if (f.payload.size() > f.length) ++contract_violations;
    if (frame_done != (f.payload.size() == f.length)) ++contract_violations;
    f.done = frame_done;
    return error::none;
  }
};

struct parse_result {
  error err;
  recording_handler h;
};

parse_result parse(const bytes& input, std::span<const std::size_t> cuts, const parser_limits& lim = {}) {
  frame_parser p;
  parse_result r{error::none, {}};
  r.err = feed_pieces(input, cuts, [&](std::span<std::uint8_t> piece) { return p.feed(piece, lim, r.h); });
  EXPECT_EQ(r.h.contract_violations, 0) << describe(cuts);
  return r;
}

recorded_frame expected_frame(opcode op, const bytes& payload, bool fin = true, bool rsv1 = false) {
  return {op, fin, rsv1, payload.size(), payload, true};
}

// ---------------------------------------------------------------------------
// Length encodings at the edges of each form.

struct length_case {
  std::size_t length;
  length_form form;
};

void PrintTo(const length_case& c, std::ostream* os) { *os << c.length << " bytes, form " << int(c.form); }

class frame_parser_lengths : public ::testing::TestWithParam<length_case> {};

TEST_P(frame_parser_lengths, payload_delivered_unmasked_in_any_split) {
  const auto [len, form] = GetParam();
  const bytes payload = pattern(len);
  const bytes input = build_frame({.opcode = op_binary, .form = form}, payload);
  // Every cut through the header and the first bytes of the payload, some
  // inside, the end, and byte at a time; every 2-way split would be
  // quadratic on 64 KiB.
  const std::size_t n = input.size();
  std::vector<std::vector<std::size_t>> splits{{}, {n / 2}, {n - 1, n}, {n / 3, n / 2, n - 2}};
  for (std::size_t c = 0; c <= std::min<std::size_t>(n, 20); ++c) splits.push_back({c});
  std::vector<std::size_t> each;
  for (std::size_t c = 1; c < n; ++c) each.push_back(c);
  splits.push_back(each);

  for (const auto& cuts : splits) {
    if (!std::is_sorted(cuts.begin(), cuts.end())) continue;  // short frames: n/3 may exceed n-2
    const parse_result r = parse(input, cuts);
    ASSERT_EQ(r.err, error::none) << describe(cuts);
    ASSERT_EQ(r.h.frames.size(), 1u) << describe(cuts);
    EXPECT_EQ(r.h.frames[0], expected_frame(opcode::binary, payload)) << describe(cuts);
  }
}

std::string length_name(const ::testing::TestParamInfo<length_case>& info) {
  static const char* forms[] = {"minimal", "bits16", "bits64"};
  return "len_" + std::to_string(info.param.length) + "_" + forms[static_cast<int>(info.param.form)];
}

INSTANTIATE_TEST_SUITE_P(edges, frame_parser_lengths,
                         ::testing::Values(length_case{0, length_form::minimal}, length_case{1, length_form::minimal},
                                           length_case{125, length_form::minimal},
                                           length_case{126, length_form::bits16},
                                           length_case{65535, length_form::bits16},
                                           length_case{65536, length_form::bits64},
                                           // Non-minimal forms are parsed by value too.
                                           length_case{0, length_form::bits64}, length_case{5, length_form::bits16}),
                         length_name);

// ---------------------------------------------------------------------------
// A conversation: fragmented text with control frames between fragments,
// empty frames and a binary message, split every way.

bytes conversation() {
  return concat({frame(op_text, "Hel", false), frame(op_ping, "p1"), frame(op_cont, "lo, ", false), frame(op_pong, ""),
                 frame(op_cont, "", false), frame(op_cont, "world"),
                 build_frame({.opcode = op_binary, .key = {0, 0, 0, 0}}, pattern(9)), frame(op_text, ""),
                 frame(op_close, close_payload(1000, "bye"))});
}

std::vector<recorded_frame> conversation_frames() {
  return {expected_frame(opcode::text, to_bytes("Hel"), false),
          expected_frame(opcode::ping, to_bytes("p1")),
          expected_frame(opcode::continuation, to_bytes("lo, "), false),
          expected_frame(opcode::pong, {}),
          expected_frame(opcode::continuation, {}, false),
          expected_frame(opcode::continuation, to_bytes("world")),
          expected_frame(opcode::binary, pattern(9)),
          expected_frame(opcode::text, {}),
          expected_frame(opcode::close, close_payload(1000, "bye"))};
}

TEST(frame_parser_splits, same_frames_for_every_split) {
  const bytes input = conversation();
  const auto expected = conversation_frames();
  for (const auto& cuts : all_splits(input.size(), input.size())) {
    const parse_result r = parse(input, cuts);
    ASSERT_EQ(r.err, error::none) << describe(cuts);
    ASSERT_EQ(r.h.frames, expected) << describe(cuts);
  }
}

TEST(frame_parser_state, counts_each_frame_once_when_its_header_is_whole) {
  // The frames-per-read histogram takes differences of this count around
  // each read: a split header counts with the read that completes it.
  const bytes input = conversation();
  const auto frames = static_cast<std::uint32_t>(conversation_frames().size());
  for (const auto& cuts : all_splits(input.size(), input.size())) {
    frame_parser p;
    recording_handler h;
    std::uint32_t seen = 0;
    ASSERT_EQ(feed_pieces(input, cuts,
                          [&](std::span<std::uint8_t> piece) {
                            const std::uint32_t before = p.frames_begun();
                            const error e = p.feed(piece, parser_limits{}, h);
                            EXPECT_EQ(p.frames_begun() - before, h.frames.size() - seen) << describe(cuts);
                            seen = static_cast<std::uint32_t>(h.frames.size());
                            return e;
                          }),
              error::none)
        << describe(cuts);
    EXPECT_EQ(p.frames_begun(), frames) << describe(cuts);
  }
}

TEST(frame_parser_state, in_message_and_mid_frame_track_the_input) {
  frame_parser p;
  recording_handler h;
  const parser_limits lim;
  bytes first = frame(op_text, "ab", false);
  ASSERT_EQ(p.feed(std::span(first).first(1), lim, h), error::none);
  EXPECT_TRUE(p.mid_frame());  // half a header held
  EXPECT_FALSE(p.in_message());
  ASSERT_EQ(p.feed(std::span(first).subspan(1, first.size() - 2), lim, h), error::none);
  EXPECT_TRUE(p.mid_frame());  // one payload byte still to come
  EXPECT_TRUE(p.in_message());
  ASSERT_EQ(p.feed(std::span(first).last(1), lim, h), error::none);
  EXPECT_FALSE(p.mid_frame());
  EXPECT_TRUE(p.in_message());
  bytes last = frame(op_cont, "c");
  ASSERT_EQ(p.feed(last, lim, h), error::none);
  EXPECT_FALSE(p.mid_frame());
  EXPECT_FALSE(p.in_message());
  EXPECT_EQ(p.failed(), error::none);
}

TEST(frame_parser_rsv1, compressed_messages_have_their_own_wire_limit) {
  // RFC 7692: incompressible data grows a little when compressed; the limit
  // that matters is on the inflated size, so RSV1 messages get their own.
  parser_limits lim;
  lim.allow_rsv1 = true;
  lim.max_message_size = 1280;
  const std::size_t wire_limit = 1424;
  lim.max_compressed_size = wire_limit;
  recording_handler h;
  {
    frame_parser p;
    bytes f = build_frame({.rsv = 0x40}, pattern(wire_limit));
    EXPECT_EQ(p.feed(f, lim, h), error::none);
  }
  {
    frame_parser p;
    bytes f = build_frame({.rsv = 0x40}, pattern(wire_limit + 1));
    EXPECT_EQ(p.feed(f, lim, h), error::message_too_big);
  }
  {
    frame_parser p;  // the same budget over fragments
    bytes f =
        concat({build_frame({.fin = false, .rsv = 0x40}, pattern(1000)), frame(op_cont, pattern(wire_limit - 1000))});
    EXPECT_EQ(p.feed(f, lim, h), error::none);
    bytes g =
        concat({build_frame({.fin = false, .rsv = 0x40}, pattern(1000)), frame(op_cont, pattern(wire_limit - 999))});
    EXPECT_EQ(frame_parser{}.feed(g, lim, h), error::message_too_big);
  }
  {
    frame_parser p;  // an uncompressed message keeps the exact limit
    bytes f = build_frame({}, pattern(1281));
    EXPECT_EQ(p.feed(f, lim, h), error::message_too_big);
  }
  {
    frame_parser p;  // unset, RSV1 messages have the plain limit
    lim.max_compressed_size = 0;
    bytes f = build_frame({.rsv = 0x40}, pattern(1281));
    EXPECT_EQ(p.feed(f, lim, h), error::message_too_big);
  }
}

TEST(frame_parser_rsv1, accepted_on_first_data_frame_when_allowed) {
  const bytes input =
      concat({build_frame({.opcode = op_text, .fin = false, .rsv = 0x40}, to_bytes("ab")), frame(op_cont, "cd")});
  parser_limits lim;
  lim.allow_rsv1 = true;
  for (const auto& cuts : all_splits(input.size())) {
    const parse_result r = parse(input, cuts, lim);
    ASSERT_EQ(r.err, error::none) << describe(cuts);
    ASSERT_EQ(r.h.frames.size(), 2u);
    EXPECT_TRUE(r.h.frames[0].rsv1);
    EXPECT_FALSE(r.h.frames[1].rsv1);
  }
}

// ---------------------------------------------------------------------------
// Limits exactly at the boundary are accepted.

TEST(frame_parser_limits, single_frame_at_max_message_size_accepted) {
  parser_limits lim;
  lim.max_message_size = 200;
  const parse_result r = parse(frame(op_binary, pattern(200)), {}, lim);
  EXPECT_EQ(r.err, error::none);
  ASSERT_EQ(r.h.frames.size(), 1u);
  EXPECT_EQ(r.h.frames[0].payload.size(), 200u);
}

TEST(frame_parser_limits, fragments_adding_up_to_max_message_size_accepted) {
  parser_limits lim;
  lim.max_message_size = 100;
  const bytes input = concat({frame(op_text, bytes(60, 'a'), false), frame(op_ping, "x"),
                              frame(op_cont, bytes(39, 'b'), false), frame(op_cont, bytes(1, 'c'))});
  const parse_result r = parse(input, {}, lim);
  EXPECT_EQ(r.err, error::none);
  EXPECT_EQ(r.h.frames.size(), 4u);
}

TEST(frame_parser_limits, control_frames_do_not_count_toward_the_message) {
  parser_limits lim;
  lim.max_message_size = 10;
  lim.max_fragments = 2;
  const bytes input = concat({frame(op_text, bytes(5, 'a'), false), frame(op_ping, bytes(125, 'p')),
                              frame(op_pong, bytes(125, 'q')), frame(op_cont, bytes(5, 'b'))});
  EXPECT_EQ(parse(input, {}, lim).err, error::none);
}

TEST(frame_parser_limits, max_fragments_exactly_accepted) {
  parser_limits lim;
  lim.max_fragments = 3;
  const bytes input = concat({frame(op_text, "a", false), frame(op_cont, "b", false), frame(op_cont, "c")});
  EXPECT_EQ(parse(input, {}, lim).err, error::none);
}

TEST(frame_parser_limits, counts_restart_with_each_message) {
  // Two messages each at the limit: the second must not inherit the first's
  // size or fragment count.
  parser_limits lim;
  lim.max_message_size = 4;
  lim.max_fragments = 2;
  const bytes one = concat({frame(op_text, "ab", false), frame(op_cont, "cd")});
  const bytes input = concat({one, one, frame(op_binary, "wxyz")});
  const parse_result r = parse(input, {}, lim);
  EXPECT_EQ(r.err, error::none);
  EXPECT_EQ(r.h.frames.size(), 5u);
}

TEST(frame_parser_limits, control_frame_of_125_accepted) {
  for (std::uint8_t op : {op_ping, op_pong, op_close}) {
    const parse_result r = parse(frame(op, pattern(125)), {});
    EXPECT_EQ(r.err, error::none) << int(op);
    ASSERT_EQ(r.h.frames.size(), 1u);
    EXPECT_EQ(r.h.frames[0].payload, pattern(125));
  }
}

// ---------------------------------------------------------------------------
// Each named error, whole and in every split; the offending frame must not
// reach the handler (no on_frame_begin, so no payload either).

struct error_case {
  std::string name;
  bytes input;
  parser_limits limits;
  error expected;
  std::size_t frames_before;  // frames completed before the offending header
};

parser_limits with_rsv1() {
  parser_limits l;
  l.allow_rsv1 = true;
  return l;
}
parser_limits with_max_size(std::uint64_t n) {
  parser_limits l;
  l.max_message_size = n;
  return l;
}
parser_limits with_max_fragments(std::uint32_t n) {
  parser_limits l;
  l.max_fragments = n;
  return l;
}

std::vector<error_case> error_cases() {
  const bytes ok = frame(op_text, "ok");
  const bytes open = frame(op_text, "open", false);
  std::vector<error_case> v{
      {"rsv1_without_extension", build_frame({.rsv = 0x40}, to_bytes("x")), {}, error::reserved_bits, 0},
      {"rsv2", build_frame({.rsv = 0x20}, to_bytes("x")), with_rsv1(), error::reserved_bits, 0},
      {"rsv3", build_frame({.rsv = 0x10}, to_bytes("x")), with_rsv1(), error::reserved_bits, 0},
      {"rsv1_after_valid_frame",
       concat({ok, build_frame({.opcode = op_binary, .rsv = 0x40}, to_bytes("x"))}),
       {},
       error::reserved_bits,
       1},
      {"rsv1_on_ping_even_when_allowed", build_frame({.opcode = op_ping, .rsv = 0x40}, to_bytes("x")), with_rsv1(),
       error::compressed_control_frame, 0},
      {"rsv1_on_close_even_when_allowed", build_frame({.opcode = op_close, .rsv = 0x40}, {}), with_rsv1(),
       error::compressed_control_frame, 0},
      {"rsv1_on_ping_without_extension",
       build_frame({.opcode = op_ping, .rsv = 0x40}, to_bytes("x")),
       {},
       error::reserved_bits,
       0},
      {"rsv1_on_continuation_even_when_allowed",
       concat({build_frame({.opcode = op_text, .fin = false, .rsv = 0x40}, to_bytes("a")),
               build_frame({.opcode = op_cont, .rsv = 0x40}, to_bytes("b"))}),
       with_rsv1(), error::compressed_continuation, 1},
      {"rsv1_on_continuation_of_uncompressed_message",
       concat({build_frame({.opcode = op_text, .fin = false}, to_bytes("a")),
               build_frame({.opcode = op_cont, .rsv = 0x40}, to_bytes("b"))}),
       with_rsv1(), error::compressed_continuation, 1},
      {"unmasked_frame", build_frame({.masked = false}, to_bytes("hi")), {}, error::unmasked_frame, 0},
      {"unmasked_after_valid_frame",
       concat({ok, build_frame({.opcode = op_ping, .masked = false}, {})}),
       {},
       error::unmasked_frame,
       1},
      {"ping_126_bytes", frame(op_ping, pattern(126)), {}, error::control_frame_too_long, 0},
      {"close_126_bytes", frame(op_close, pattern(126)), {}, error::control_frame_too_long, 0},
      {"pong_64bit_huge",
       build_frame({.opcode = op_pong, .declared_length = 1ull << 40}, {}),
       {},
       error::control_frame_too_long,
       0},
      {"ping_fragmented", frame(op_ping, "x", false), {}, error::control_frame_fragmented, 0},
      {"close_fragmented_inside_message",
       concat({open, frame(op_close, "", false)}),
       {},
       error::control_frame_fragmented,
       1},
      {"continuation_first", frame(op_cont, "x"), {}, error::continuation_without_start, 0},
      {"continuation_after_complete_message",
       concat({ok, frame(op_cont, "x")}),
       {},
       error::continuation_without_start,
       1},
      {"continuation_after_final_fragment",
       concat({open, frame(op_cont, "end"), frame(op_cont, "x")}),
       {},
       error::continuation_without_start,
       2},
      {"text_inside_fragmented", concat({open, frame(op_text, "x")}), {}, error::data_frame_in_fragmented, 1},
      {"binary_inside_fragmented",
       concat({open, frame(op_ping, ""), frame(op_binary, "x")}),
       {},
       error::data_frame_in_fragmented,
       2},
      {"length_msb_set",
       build_frame({.opcode = op_binary, .declared_length = 1ull << 63}, {}),
       {},
       error::invalid_length,
       0},
      {"length_all_ones",
       build_frame({.opcode = op_binary, .declared_length = ~0ull}, {}),
       {},
       error::invalid_length,
       0},
      {"single_frame_one_over_limit", frame(op_binary, pattern(101)), with_max_size(100), error::message_too_big, 0},
      {"single_frame_declared_huge",
       build_frame({.opcode = op_text, .declared_length = 1ull << 62}, {}),
       {},
       error::message_too_big,
       0},
      {"fragments_one_over_limit",
       concat({frame(op_text, bytes(60, 'a'), false), frame(op_cont, bytes(40, 'b'), false),
               frame(op_cont, bytes(1, 'c'))}),
       with_max_size(100), error::message_too_big, 2},
      {"fragment_declared_huge_after_some",
       concat({frame(op_text, "abc", false), build_frame({.opcode = op_cont, .declared_length = ~0ull >> 1}, {})}),
       {},
       error::message_too_big,
       1},
      {"too_many_fragments",
       concat(
           {frame(op_text, "a", false), frame(op_cont, "b", false), frame(op_cont, "c", false), frame(op_cont, "d")}),
       with_max_fragments(3), error::too_many_fragments, 3},
      {"too_many_empty_fragments", concat({frame(op_binary, "", false), frame(op_ping, ""), frame(op_cont, "", false)}),
       with_max_fragments(1), error::too_many_fragments, 2},
  };
  for (std::uint8_t op : std::initializer_list<std::uint8_t>{3, 4, 5, 6, 7, 11, 12, 13, 14, 15}) {
    v.push_back({"reserved_opcode_" + std::to_string(op),
                 build_frame({.opcode = op}, to_bytes("x")),
                 {},
                 error::reserved_opcode,
                 0});
    v.push_back({"reserved_opcode_" + std::to_string(op) + "_inside_message",
                 concat({open, build_frame({.opcode = op}, {})}),
                 {},
                 error::reserved_opcode,
                 1});
  }
  return v;
}

class frame_parser_errors : public ::testing::TestWithParam<error_case> {};

TEST_P(frame_parser_errors, rejected_at_the_header_in_every_split) {
  const error_case& c = GetParam();
  for (const auto& cuts : all_splits(c.input.size(), 48)) {
    const parse_result r = parse(c.input, cuts, c.limits);
    ASSERT_EQ(r.err, c.expected) << describe(cuts) << " got " << fg::ws::to_string(r.err);
    ASSERT_EQ(r.h.frames.size(), c.frames_before) << describe(cuts);
    for (const auto& f : r.h.frames) EXPECT_TRUE(f.done) << describe(cuts);
  }
}

TEST_P(frame_parser_errors, error_is_sticky) {
  const error_case& c = GetParam();
  frame_parser p;
  recording_handler h;
  bytes input = c.input;
  ASSERT_EQ(p.feed(input, c.limits, h), c.expected);
  EXPECT_EQ(p.failed(), c.expected);
  const std::size_t seen = h.frames.size();
  bytes valid = frame(op_binary, "fine");
  EXPECT_EQ(p.feed(valid, c.limits, h), c.expected);
  bytes empty;
  EXPECT_EQ(p.feed(empty, c.limits, h), c.expected);
  EXPECT_EQ(p.failed(), c.expected);
  EXPECT_EQ(h.frames.size(), seen) << "a failed parser must not report frames";
}

INSTANTIATE_TEST_SUITE_P(named, frame_parser_errors, ::testing::ValuesIn(error_cases()), fg::test::param_name{});

TEST(frame_parser_handler, handler_error_stops_and_sticks) {
  frame_parser p;
  recording_handler h;
  h.fail_begin_with = error::invalid_utf8;
  bytes input = concat({frame(op_text, "a"), frame(op_text, "b")});
  EXPECT_EQ(p.feed(input, {}, h), error::invalid_utf8);
  EXPECT_EQ(h.frames.size(), 1u);
  EXPECT_TRUE(h.frames[0].payload.empty()) << "no data after a refused begin";
  EXPECT_EQ(p.failed(), error::invalid_utf8);
  h.fail_begin_with = error::none;
  bytes more = frame(op_text, "c");
  EXPECT_EQ(p.feed(more, {}, h), error::invalid_utf8);
  EXPECT_EQ(h.frames.size(), 1u);
}

}  // namespace
