// The hand-written fast paths of the link against the generated code:
// encode_send and encode_message must make the bytes SerializeToString
// makes; send_view and message_view must read what libprotobuf reads, and
// decline (never misread) what they do not take. Random cases, edge
// encodings built field by field, and random corruptions of both.
#include "common/link/hot_envelopes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/message_encoder.hpp"
#include "common/link/send_encoder.hpp"
#include "common/link/wire_format.hpp"
#include "framegate/link.pb.h"

namespace {

namespace pb = framegate::link;
namespace wire = fg::link::wire;
using bytes = std::vector<std::uint8_t>;
using fg::link::message_view;
using fg::link::send_view;
using wire::wire_type;

std::span<const std::uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
std::string string_of(std::span<const std::uint8_t> b) { return {b.begin(), b.end()}; }

// ---- building protobuf bytes field by field

void varint(bytes& out, std::uint64_t v) {
  std::uint8_t tmp[10];
  out.insert(out.end(), tmp, wire::put_varint(tmp, v));
}
void key(bytes& out, std::uint32_t field, wire_type t) {
  varint(out, (std::uint64_t{field} << 3) | static_cast<int>(t));
}
void varint_field(bytes& out, std::uint32_t field, std::uint64_t v) {
  key(out, field, wire_type::varint);
  varint(out, v);
}
void bytes_field(bytes& out, std::uint32_t field, const bytes& b) {
  key(out, field, wire_type::length_delimited);
  varint(out, b.size());
  out.insert(out.end(), b.begin(), b.end());
}
bytes packed(const std::vector<std::uint64_t>& ids) {
  bytes out;
  for (const auto id : ids) varint(out, id);
  return out;
}
bytes envelope_with(std::uint32_t field, const bytes& body) {
  bytes out;
  bytes_field(out, field, body);
  return out;
}

// ---- what each side reads

struct send_fields {
  std::vector<std::uint64_t> ids;
  bool binary = false;
  std::string payload;
  bool operator==(const send_fields&) const = default;
};

std::optional<send_fields> fast_send(std::span<const std::uint8_t> envelope) {
  const auto v = send_view::parse(envelope);
  if (!v) return std::nullopt;
  send_fields f{{}, v->binary(), string_of(v->payload())};
  v->for_each_recipient([&](std::uint64_t id) { f.ids.push_back(id); });
  EXPECT_EQ(f.ids.size(), v->recipient_count());
  return f;
}

// libprotobuf's reading: nothing when it rejects the bytes; a non-Send as
// an empty optional inside.
std::optional<std::optional<send_fields>> generated_send(std::span<const std::uint8_t> envelope) {
  pb::Envelope e;
  if (!e.ParseFromArray(envelope.data(), static_cast<int>(envelope.size()))) return std::nullopt;
  if (e.body_case() != pb::Envelope::kSend) return std::optional<send_fields>{};
  const auto& s = e.send();
  return send_fields{{s.conn_ids().begin(), s.conn_ids().end()}, s.binary(), s.payload()};
}

// The contract: what the fast reader takes, libprotobuf reads the same.
void expect_send_agrees(std::span<const std::uint8_t> envelope) {
  const auto fast = fast_send(envelope);
  if (!fast) return;
  const auto slow = generated_send(envelope);
  ASSERT_TRUE(slow.has_value()) << "taken by the fast reader, rejected by libprotobuf";
  ASSERT_TRUE(slow->has_value()) << "taken as a Send, not one for libprotobuf";
  EXPECT_EQ(**slow, *fast);
}

bool same_message(const message_view& m, const pb::Message& g) {
  return m.conn_id == g.conn_id() && m.binary == g.binary() && string_of(m.payload) == g.payload() && m.seq == g.seq();
}

void expect_message_agrees(std::span<const std::uint8_t> envelope) {
  const auto fast = message_view::parse(envelope);
  if (!fast) return;
  pb::Envelope e;
  ASSERT_TRUE(e.ParseFromArray(envelope.data(), static_cast<int>(envelope.size())));
  ASSERT_EQ(e.body_case(), pb::Envelope::kMessage);
  EXPECT_TRUE(same_message(*fast, e.message()));
}

std::uint64_t random_id(std::mt19937_64& rng) {
  // Every varint length, 0 and the top bit included.
  const int bits = static_cast<int>(rng() % 65);
  return bits == 0 ? 0 : rng() >> (64 - bits);
}

std::string random_payload(std::mt19937_64& rng) {
  std::string s(rng() % 3 == 0 ? 0 : rng() % 2000, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// The envelope's bytes without the frame header.
std::span<const std::uint8_t> body_of(const fg::byte_buffer& framed) {
  return framed.span().subspan(fg::link::header_size);
}

// ---- encoders

TEST(HotEnvelopes, EncodeSendMakesTheGeneratedCodesBytes) {
  std::mt19937_64 rng(14);
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::uint64_t> ids(rng() % 4 == 0 ? 0 : 1 + rng() % 40);
    for (auto& id : ids) id = random_id(rng);
    const bool binary = rng() % 2 == 0;
    const std::string payload = random_payload(rng);

    fg::byte_buffer ours;
    const std::size_t n = fg::link::encode_send(ours, ids, binary, span_of(payload));
    pb::Envelope e;
    auto* s = e.mutable_send();
    s->mutable_conn_ids()->Assign(ids.begin(), ids.end());
    s->set_binary(binary);
    s->set_payload(payload);
    fg::byte_buffer theirs;
    fg::link::encode(e, theirs);
    ASSERT_EQ(n, ours.size());
    ASSERT_EQ(string_of(ours.span()), string_of(theirs.span())) << "case " << i;
  }
}

TEST(HotEnvelopes, EncodeMessageIsReadBackByBothReaders) {
  std::mt19937_64 rng(15);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t conn = random_id(rng) | 1;  // the gateway's ids start at 1
    const std::uint64_t seq = random_id(rng);
    const bool binary = rng() % 2 == 0;
    const std::string payload = random_payload(rng);
    fg::byte_buffer out;
    fg::link::encode_message(out, conn, binary, span_of(payload), seq);
    pb::Envelope e;
    ASSERT_TRUE(e.ParseFromArray(body_of(out).data(), static_cast<int>(body_of(out).size())));
    ASSERT_EQ(e.message().conn_id(), conn);
    ASSERT_EQ(e.message().payload(), payload);
    const auto fast = message_view::parse(body_of(out));
    ASSERT_TRUE(fast.has_value());
    ASSERT_TRUE(same_message(*fast, e.message()));
  }
}

// ---- send_view on what the generated code writes

TEST(HotEnvelopes, SendViewReadsWhatTheGeneratedCodeWrites) {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 2000; ++i) {
    pb::Envelope e;
    auto* s = e.mutable_send();
    for (std::size_t n = rng() % 50; n > 0; --n) s->add_conn_ids(random_id(rng));
    s->set_binary(rng() % 2 == 0);
    s->set_payload(random_payload(rng));
    const std::string b = e.SerializeAsString();
    const auto fast = fast_send(span_of(b));
    ASSERT_TRUE(fast.has_value()) << "case " << i;
    ASSERT_EQ(fast->ids, std::vector<std::uint64_t>(s->conn_ids().begin(), s->conn_ids().end()));
    ASSERT_EQ(fast->binary, s->binary());
    ASSERT_EQ(fast->payload, s->payload());
  }
}

TEST(HotEnvelopes, AnEmptySendHasNoRecipientsAndAnEmptyPayload) {
  const bytes e = envelope_with(6, {});
  const auto fast = fast_send(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, send_fields{});
  expect_send_agrees(e);
}

// ---- the encodings libprotobuf accepts that encoders rarely write

TEST(HotEnvelopes, SendFieldsInAnyOrderUnpackedIdsSplitIdsAndLastWins) {
  bytes send;
  bytes_field(send, 3, {'o', 'l', 'd'});             // payload, replaced below
  varint_field(send, 2, 1);                          // binary, replaced below
  varint_field(send, 1, 7);                          // an unpacked id
  bytes_field(send, 1, packed({8, 1ull << 63, 0}));  // then packed ones
  varint_field(send, 1, 300);                        // then unpacked again
  bytes_field(send, 3, {'n', 'e', 'w'});             // last payload wins
  varint_field(send, 2, 0);                          // last binary wins
  const bytes e = envelope_with(6, send);
  const auto fast = fast_send(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, (send_fields{{7, 8, 1ull << 63, 0, 300}, false, "new"}));
  expect_send_agrees(e);
}

TEST(HotEnvelopes, SendViewReadsThePublishersCompressionWhenItFitsThePayload) {
  bytes e;  // the view points into it
  const auto view_of = [&e](const bytes& send) {
    e = envelope_with(6, send);
    expect_send_agrees(e);
    const auto v = send_view::parse(e);
    EXPECT_TRUE(v.has_value());
    return v ? v->deflated() : fg::deflated_prefix{};
  };
  bytes send;
  bytes_field(send, 3, {'a', 'b', 'c', 'd', 'e', 'f'});
  EXPECT_FALSE(view_of(send).present()) << "no field 4: none";
  bytes_field(send, 4, {0x4a, 0x00, 0xff});
  varint_field(send, 5, 5);
  auto pre = view_of(send);
  ASSERT_TRUE(pre.present());
  EXPECT_EQ(string_of(pre.segment), std::string("\x4a\x00\xff", 3));
  EXPECT_EQ(pre.covers, 5u);
  EXPECT_EQ(pre.window_bits, 15);
  varint_field(send, 5, 6);  // the whole payload: still inside it (last value wins)
  EXPECT_EQ(view_of(send).covers, 6u);
  varint_field(send, 5, 7);  // more than the payload has: not used
  EXPECT_FALSE(view_of(send).present());

  bytes wrong_type;
  varint_field(wrong_type, 4, 1);
  EXPECT_FALSE(send_view::parse(envelope_with(6, wrong_type)).has_value()) << "declined: libprotobuf decides";
}

TEST(HotEnvelopes, BinaryIsAnyNonZeroVarint) {
  bytes send;
  varint_field(send, 2, 1ull << 40);
  const auto fast = fast_send(envelope_with(6, send));
  ASSERT_TRUE(fast.has_value());
  EXPECT_TRUE(fast->binary);
  expect_send_agrees(envelope_with(6, send));
}

TEST(HotEnvelopes, UnknownFieldsOfEveryWireTypeAreSkipped) {
  bytes send;
  varint_field(send, 9, 5);
  key(send, 10, wire_type::fixed64);
  send.insert(send.end(), 8, 0xAB);
  key(send, 11, wire_type::fixed32);
  send.insert(send.end(), 4, 0xCD);
  bytes_field(send, 12, {1, 2, 3});
  bytes_field(send, 1, packed({42}));
  bytes_field(send, 3, {'x'});
  bytes e;
  varint_field(e, 100, 1);  // unknown envelope fields around the body
  bytes_field(e, 6, send);
  bytes_field(e, 1000, {9});
  const auto fast = fast_send(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, (send_fields{{42}, false, "x"}));
  expect_send_agrees(e);
}

TEST(HotEnvelopes, OverlongButValidVarintsAreRead) {
  // 7 padded to three bytes, as libprotobuf accepts.
  bytes send{0x08, 0x87, 0x80, 0x00};
  const auto fast = fast_send(envelope_with(6, send));
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->ids, std::vector<std::uint64_t>{7});
  expect_send_agrees(envelope_with(6, send));
  // A length padded to five bytes, libprotobuf's most for a length.
  const bytes padded_length{0x32, 0x80, 0x80, 0x80, 0x80, 0x00};
  ASSERT_TRUE(send_view::parse(padded_length).has_value());
  expect_send_agrees(padded_length);
}

// ---- declined: left to libprotobuf, whatever it decides

TEST(HotEnvelopes, DeclinesWhatItDoesNotTakeAndLibprotobufDecides) {
  struct declined {
    const char* why;
    bytes envelope;
    bool generated_accepts;
  };
  std::vector<declined> cases;
  {
    bytes e = envelope_with(6, packed({}));
    bytes_field(e, 6, {});  // the body twice: libprotobuf merges
    cases.push_back({"Send twice", e, true});
  }
  {
    bytes e;
    varint_field(e, 9, 1);  // an Ack's field number: another known field
    bytes_field(e, 6, {});
    cases.push_back({"another known field", e, true});
  }
  {
    bytes send;
    key(send, 20, wire_type{3});  // an unknown group
    key(send, 20, wire_type{4});
    cases.push_back({"a group", envelope_with(6, send), true});
  }
  {
    bytes send;
    bytes_field(send, 2, {1});  // binary, length-delimited: unknown to libprotobuf
    cases.push_back({"binary with the wrong wire type", envelope_with(6, send), true});
  }
  {
    bytes send;
    key(send, 1, wire_type::fixed64);
    send.insert(send.end(), 8, 0);
    cases.push_back({"conn_ids fixed64", envelope_with(6, send), true});
  }
  cases.push_back({"truncated packed ids", envelope_with(6, {0x0A, 0x02, 0x81, 0x81}), false});
  cases.push_back({"body longer than the envelope", {0x32, 0x05, 0x10, 0x01}, false});
  cases.push_back({"field number 0", envelope_with(6, {0x00, 0x01}), false});
  cases.push_back({"wire type 7", envelope_with(6, {0x0F}), false});
  // Found by the fuzz target: libprotobuf reads a length in at most 5 bytes.
  cases.push_back(
      {"a length padded to seven bytes", {0xA0, 0x06, 0x01, 0x32, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, false});
  cases.push_back({"11-byte varint",
                   envelope_with(6, {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}), false});
  cases.push_back({"not a Send", envelope_with(9, {0x08, 0x01}), true});
  for (const auto& c : cases) {
    EXPECT_FALSE(send_view::parse(c.envelope).has_value()) << c.why;
    pb::Envelope e;
    EXPECT_EQ(e.ParseFromArray(c.envelope.data(), static_cast<int>(c.envelope.size())), c.generated_accepts) << c.why;
  }
}

TEST(HotEnvelopes, MessageViewFieldsInAnyOrderWithUnknownsAndLastWins) {
  bytes m;
  varint_field(m, 4, 99);  // seq first
  bytes_field(m, 3, {'a'});
  varint_field(m, 7, 1);  // unknown
  varint_field(m, 1, 5);
  varint_field(m, 2, 1);
  bytes_field(m, 3, {'b', 'c'});  // last payload wins
  varint_field(m, 1, 6);          // last conn_id wins
  const bytes e = envelope_with(4, m);
  const auto fast = message_view::parse(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->conn_id, 6u);
  EXPECT_TRUE(fast->binary);
  EXPECT_EQ(string_of(fast->payload), "bc");
  EXPECT_EQ(fast->seq, 99u);
  expect_message_agrees(e);
  EXPECT_FALSE(message_view::parse(envelope_with(6, m)).has_value());  // a Send is not a Message
  bytes wrong;
  bytes_field(wrong, 1, {5});  // conn_id length-delimited
  EXPECT_FALSE(message_view::parse(envelope_with(4, wrong)).has_value());
}

// ---- random corruption: whatever the fast readers take, libprotobuf reads the same

TEST(HotEnvelopes, CorruptedEnvelopesAreReadAlikeOrDeclined) {
  std::mt19937_64 rng(17);
  std::size_t taken = 0;
  for (int i = 0; i < 20000; ++i) {
    fg::byte_buffer framed;
    if (i % 2 == 0) {
      std::vector<std::uint64_t> ids(rng() % 6);
      for (auto& id : ids) id = random_id(rng);
      fg::link::encode_send(framed, ids, rng() % 2 == 0, span_of(random_payload(rng).substr(0, 40)));
    } else {
      fg::link::encode_message(framed, random_id(rng) | 1, rng() % 2 == 0, span_of(random_payload(rng).substr(0, 40)),
                               random_id(rng));
    }
    bytes b(body_of(framed).begin(), body_of(framed).end());
    for (std::size_t flips = 1 + rng() % 3; flips > 0 && !b.empty(); --flips)
      b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    if (rng() % 4 == 0 && !b.empty()) b.resize(rng() % b.size());
    expect_send_agrees(b);
    expect_message_agrees(b);
    taken += (send_view::parse(b) || message_view::parse(b)) ? 1 : 0;
    if (::testing::Test::HasFailure()) FAIL() << "case " << i;
  }
  EXPECT_GT(taken, 1000u);  // the corruptions did not all make unreadable bytes
}

// ---- the decoder's hot path

TEST(HotEnvelopes, DecoderOffersEveryEnvelopeToTryHotFirstAtEverySplit) {
  fg::byte_buffer stream;
  std::vector<std::string> expected;
  for (int i = 0; i < 6; ++i) {
    const std::string payload(i * 700, static_cast<char>('a' + i));
    const std::uint64_t id = 10 + i;
    fg::link::encode_send(stream, std::span<const std::uint64_t>(&id, 1), false, span_of(payload));
    expected.push_back("send " + std::to_string(id) + " " + std::to_string(payload.size()));
    pb::Envelope ack;
    ack.mutable_ack()->set_seq(i + 1);
    fg::link::encode(ack, stream);
    expected.push_back("ack " + std::to_string(i + 1));
  }
  const auto all = stream.span();
  for (std::size_t cut = 0; cut <= all.size(); cut += 7) {
    std::vector<std::string> got;
    const auto hot = [&](std::span<const std::uint8_t> body) {
      const auto s = fg::link::send_view::parse(body);
      if (!s) return false;
      s->for_each_recipient([&](std::uint64_t id) {
        got.push_back("send " + std::to_string(id) + " " + std::to_string(s->payload().size()));
      });
      return true;
    };
    const auto rest = [&](const pb::Envelope& e) { got.push_back("ack " + std::to_string(e.ack().seq())); };
    fg::link::decoder d;
    ASSERT_EQ(d.feed(all.first(cut), hot, rest), fg::link::decode_error::none);
    ASSERT_EQ(d.feed(all.subspan(cut), hot, rest), fg::link::decode_error::none);
    ASSERT_EQ(got, expected) << "cut at " << cut;
    EXPECT_EQ(d.pending(), 0u);
  }
}

}  // namespace
