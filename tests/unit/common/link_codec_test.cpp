// The link codec: framing, round trips, splits at every offset, and each
// decode error (checked before any protobuf is parsed, and final).
#include "common/link/codec.hpp"

#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/link/send_encoder.hpp"
#include "common/link/wire_format.hpp"

namespace {

namespace pb = framegate::link;
using fg::byte_buffer;
using fg::link::decode_error;
using fg::link::decoder;

std::vector<pb::Envelope> one_of_each_kind() {
  std::vector<pb::Envelope> out;
  pb::Envelope e;

  auto* reg = e.mutable_register_();
  reg->set_worker_id("w1");
  reg->set_pid(4242);
  reg->set_version("0.1.0");
  reg->add_paths("/echo");
  reg->add_paths("/rooms");
  reg->set_link_index(3);
  out.push_back(e);

  e.Clear();
  auto* w = e.mutable_welcome();
  w->set_gateway_id("g-abc");
  w->set_link_index(3);
  w->set_link_count(4);
  w->set_credit_window(1024);
  out.push_back(e);

  e.Clear();
  auto* o = e.mutable_opened();
  o->set_conn_id(0xFFFF'FFFF'FFFFull);
  o->set_gateway_id("g-abc");
  o->set_path("/rooms");
  o->set_query("a=1&b=2");
  (*o->mutable_headers())["origin"] = "https://example.com";
  (*o->mutable_headers())["cookie"] = "k=v";
  o->set_subprotocol("chat");
  o->set_remote_address("10.1.2.3");
  o->set_sticky_key("user-7");
  o->set_resumed(true);
  o->mutable_state()->add_rooms("lobby");
  o->mutable_state()->set_app_data(std::string("\0\x01\x02", 3));
  out.push_back(e);

  e.Clear();
  auto* m = e.mutable_message();
  m->set_conn_id(7);
  m->set_binary(true);
  m->set_payload(std::string("\0\xff binary", 9));
  m->set_seq(99);
  out.push_back(e);

  e.Clear();
  auto* c = e.mutable_closed();
  c->set_conn_id(7);
  c->set_code(1001);
  c->set_reason("going away");
  c->set_closer(pb::CLOSER_CLIENT);
  out.push_back(e);

  e.Clear();
  auto* s = e.mutable_send();
  s->add_conn_ids(1);
  s->add_conn_ids(2);
  s->add_conn_ids(1ull << 40);
  s->set_payload("hello");
  out.push_back(e);

  e.Clear();
  auto* cc = e.mutable_close();
  cc->set_conn_id(9);
  cc->set_code(4000);
  cc->set_reason("bye");
  out.push_back(e);

  e.Clear();
  auto* st = e.mutable_state();
  st->set_conn_id(9);
  st->mutable_state()->add_rooms("a");
  st->mutable_state()->add_rooms("b");
  out.push_back(e);

  e.Clear();
  e.mutable_ack()->set_seq(123456789);
  out.push_back(e);

  e.Clear();
  e.mutable_ping()->set_nonce(77);
  out.push_back(e);

  e.Clear();
  e.mutable_pong()->set_nonce(77);
  out.push_back(e);

  e.Clear();
  e.mutable_broker_subscribe()->add_subscribe("x");
  e.mutable_broker_subscribe()->add_unsubscribe("y");
  out.push_back(e);

  e.Clear();
  e.mutable_broker_publish()->set_room("x");
  e.mutable_broker_publish()->set_payload(R"({"room":"x","data":1})");
  out.push_back(e);

  e.Clear();
  e.mutable_broker_deliver()->set_room("x");
  e.mutable_broker_deliver()->set_payload(R"({"room":"x","data":1})");
  out.push_back(e);

  // An empty envelope (no body) is a valid zero-length frame.
  out.emplace_back();
  return out;
}

std::vector<pb::Envelope> decode_all(decoder& d, std::span<const std::uint8_t> bytes, decode_error* err = nullptr) {
  std::vector<pb::Envelope> got;
  const auto e = d.feed(bytes, [&](const pb::Envelope& env) { got.push_back(env); });
  if (err != nullptr) *err = e;
  return got;
}

void expect_same(const std::vector<pb::Envelope>& a, const std::vector<pb::Envelope>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) << "envelope " << i << ":\n"
                                                                                << a[i].DebugString() << "vs\n"
                                                                                << b[i].DebugString();
}

std::vector<std::uint8_t> header(std::uint8_t m0, std::uint8_t m1, std::uint8_t version, std::uint32_t length) {
  return {m0,
          m1,
          version,
          0,
          static_cast<std::uint8_t>(length >> 24),
          static_cast<std::uint8_t>(length >> 16),
          static_cast<std::uint8_t>(length >> 8),
          static_cast<std::uint8_t>(length)};
}

TEST(LinkCodec, HeaderLayoutIsMagicVersionFlagsBigEndianLength) {
  pb::Envelope e;
  e.mutable_ack()->set_seq(300);  // 0x4a 0x03 0x08 0xac 0x02: 5 bytes
  byte_buffer out;
  fg::link::encode(e, out);
  ASSERT_EQ(out.size(), fg::link::header_size + e.ByteSizeLong());
  const auto* p = out.data();
  EXPECT_EQ(p[0], 'F');
  EXPECT_EQ(p[1], 'G');
  EXPECT_EQ(p[2], 1);
  EXPECT_EQ(p[3], 0);
  const std::uint32_t length =
      (std::uint32_t{p[4]} << 24) | (std::uint32_t{p[5]} << 16) | (std::uint32_t{p[6]} << 8) | p[7];
  EXPECT_EQ(length, e.ByteSizeLong());
}

TEST(LinkCodec, EveryEnvelopeKindRoundTrips) {
  const auto sent = one_of_each_kind();
  // Every body case of the oneof is covered (plus the empty envelope).
  std::set<int> cases;
  for (const auto& e : sent) cases.insert(static_cast<int>(e.body_case()));
  EXPECT_EQ(cases.size(), 15u);

  for (const auto& e : sent) {
    byte_buffer out;
    fg::link::encode(e, out);
    decoder d;
    decode_error err{};
    const auto got = decode_all(d, out.span(), &err);
    EXPECT_EQ(err, decode_error::none);
    expect_same(got, {e});
    EXPECT_EQ(d.pending(), 0u);
  }
}

TEST(LinkCodec, StreamSplitAtEveryOffsetDecodesIdentically) {
  const auto sent = one_of_each_kind();
  byte_buffer stream;
  for (const auto& e : sent) fg::link::encode(e, stream);
  const auto all = stream.span();

  for (std::size_t cut = 0; cut <= all.size(); ++cut) {
    decoder d;
    auto got = decode_all(d, all.first(cut));
    const auto rest = decode_all(d, all.subspan(cut));
    got.insert(got.end(), rest.begin(), rest.end());
    expect_same(got, sent);
    EXPECT_EQ(d.pending(), 0u) << "cut at " << cut;
    if (::testing::Test::HasFailure()) FAIL() << "first failing cut: " << cut;
  }
}

TEST(LinkCodec, StreamFedOneByteAtATimeDecodesIdentically) {
  const auto sent = one_of_each_kind();
  byte_buffer stream;
  for (const auto& e : sent) fg::link::encode(e, stream);
  decoder d;
  std::vector<pb::Envelope> got;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const auto part = decode_all(d, stream.span().subspan(i, 1));
    got.insert(got.end(), part.begin(), part.end());
  }
  expect_same(got, sent);
}

TEST(LinkCodec, OversizeLengthIsRejectedBeforeTheBodyArrives) {
  decoder d(1024);
  // Only the header: a decoder that waited for the body (or allocated it)
  // would return none here.
  const auto h = header('F', 'G', 1, 1025);
  int calls = 0;
  EXPECT_EQ(d.feed(h, [&](const pb::Envelope&) { ++calls; }), decode_error::too_large);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(d.failed(), decode_error::too_large);
}

TEST(LinkCodec, LengthAtTheLimitIsAccepted) {
  pb::Envelope e;
  e.mutable_message()->set_payload(std::string(100, 'x'));
  byte_buffer out;
  fg::link::encode(e, out);
  decoder d(static_cast<std::uint32_t>(e.ByteSizeLong()));
  decode_error err{};
  EXPECT_EQ(decode_all(d, out.span(), &err).size(), 1u);
  EXPECT_EQ(err, decode_error::none);
}

TEST(LinkCodec, BadMagicIsRejected) {
  decoder d;
  EXPECT_EQ(d.feed(header('F', 'X', 1, 0), [](const pb::Envelope&) {}), decode_error::bad_magic);
  decoder d2;
  EXPECT_EQ(d2.feed(header('G', 'F', 1, 0), [](const pb::Envelope&) {}), decode_error::bad_magic);
}

TEST(LinkCodec, BadVersionIsRejected) {
  decoder d;
  EXPECT_EQ(d.feed(header('F', 'G', 2, 0), [](const pb::Envelope&) {}), decode_error::bad_version);
  decoder d0;
  EXPECT_EQ(d0.feed(header('F', 'G', 0, 0), [](const pb::Envelope&) {}), decode_error::bad_version);
}

TEST(LinkCodec, GarbageProtobufIsMalformed) {
  // Field 1 with wire type 7 (no such type); a length-delimited field
  // claiming more bytes than the body has.
  for (const std::vector<std::uint8_t>& body :
       {std::vector<std::uint8_t>{0x0F, 0x00}, std::vector<std::uint8_t>{0x0A, 0x05, 0x01}}) {
    auto bytes = header('F', 'G', 1, static_cast<std::uint32_t>(body.size()));
    bytes.insert(bytes.end(), body.begin(), body.end());
    decoder d;
    int calls = 0;
    EXPECT_EQ(d.feed(bytes, [&](const pb::Envelope&) { ++calls; }), decode_error::malformed);
    EXPECT_EQ(calls, 0);
  }
}

TEST(LinkCodec, EnvelopesBeforeAnErrorAreDeliveredAndTheErrorIsSticky) {
  pb::Envelope good;
  good.mutable_ping()->set_nonce(1);
  byte_buffer stream;
  fg::link::encode(good, stream);
  const auto bad = header('F', 'G', 9, 0);
  stream.append(bad);
  fg::link::encode(good, stream);

  decoder d;
  decode_error err{};
  const auto got = decode_all(d, stream.span(), &err);
  EXPECT_EQ(err, decode_error::bad_version);
  expect_same(got, {good});

  // Valid bytes after the error change nothing: the link is done.
  byte_buffer more;
  fg::link::encode(good, more);
  EXPECT_TRUE(decode_all(d, more.span(), &err).empty());
  EXPECT_EQ(err, decode_error::bad_version);
  EXPECT_EQ(d.failed(), decode_error::bad_version);
}

// ------------------------------------------- encode_send with the publisher's compression

std::span<const std::uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
std::string string_of(std::span<const std::uint8_t> b) { return {b.begin(), b.end()}; }

std::string random_string(std::mt19937_64& rng, std::size_t size) {
  std::string s(size, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// encode_send's frame: the header announces the rest, and the rest is the
// bytes SerializeToString makes of `expected`, which the decoder reads back.
void expect_encoded_as(const byte_buffer& framed, std::size_t returned, const pb::Envelope& expected) {
  ASSERT_EQ(returned, framed.size());
  ASSERT_GE(framed.size(), fg::link::header_size);
  std::string serialized;
  ASSERT_TRUE(expected.SerializeToString(&serialized));
  EXPECT_EQ(string_of(framed.span().subspan(fg::link::header_size)), serialized);
  byte_buffer theirs;
  fg::link::encode(expected, theirs);
  EXPECT_EQ(string_of(framed.span()), string_of(theirs.span())) << "the frame header too";
  decoder d;
  decode_error err{};
  const auto got = decode_all(d, framed.span(), &err);
  EXPECT_EQ(err, decode_error::none);
  expect_same(got, {expected});
}

// The field numbers of the Send inside an encoded envelope, in wire order.
std::vector<std::uint32_t> send_field_numbers(const byte_buffer& framed) {
  namespace wire = fg::link::wire;
  std::vector<std::uint32_t> numbers;
  std::span<const std::uint8_t> send;
  EXPECT_TRUE(wire::for_each_field(framed.span().subspan(fg::link::header_size), [&](const wire::field& f) {
    if (f.number == 6) send = f.bytes;
    return true;
  }));
  EXPECT_TRUE(wire::for_each_field(send, [&](const wire::field& f) {
    numbers.push_back(f.number);
    return true;
  }));
  return numbers;
}

TEST(LinkCodec, EncodeSendWithACompressedPrefixMakesTheGeneratedCodesBytes) {
  std::mt19937_64 rng(7692);
  const std::uint64_t covers_choices[] = {0, 1, 127, 128, 300, 16383, 16384, 1u << 21, 1ull << 35, ~0ull};
  for (int i = 0; i < 1000; ++i) {
    std::vector<std::uint64_t> ids(rng() % 4 == 0 ? 0 : 1 + rng() % 20);
    for (auto& id : ids) id = rng() >> (rng() % 64);
    const bool binary = rng() % 2 == 0;
    const std::string payload = random_string(rng, rng() % 5 == 0 ? 0 : rng() % 3000);
    // Up to 300 bytes, or past the 2-byte length (and one of 1 byte).
    const std::size_t segment_size = i % 7 == 0 ? 1 : i % 11 == 0 ? 20000 : 1 + rng() % 300;
    const std::string segment = random_string(rng, segment_size);
    const std::uint64_t covers =
        rng() % 2 == 0 ? covers_choices[rng() % std::size(covers_choices)] : rng() % (payload.size() + 1);

    byte_buffer ours;
    const std::size_t n = fg::link::encode_send(ours, ids, binary, span_of(payload),
                                                {span_of(segment), static_cast<std::size_t>(covers)});
    pb::Envelope e;
    auto* s = e.mutable_send();
    s->mutable_conn_ids()->Assign(ids.begin(), ids.end());
    s->set_binary(binary);
    s->set_payload(payload);
    s->set_deflated_prefix(segment);
    s->set_deflated_covers(covers);
    expect_encoded_as(ours, n, e);

    // What the generated parser reads back.
    pb::Envelope parsed;
    ASSERT_TRUE(parsed.ParseFromArray(ours.data() + fg::link::header_size,
                                      static_cast<int>(ours.size() - fg::link::header_size)));
    ASSERT_EQ(parsed.body_case(), pb::Envelope::kSend);
    ASSERT_EQ(parsed.send().deflated_prefix(), segment) << "case " << i;
    ASSERT_EQ(parsed.send().deflated_covers(), covers) << "case " << i;
    ASSERT_EQ(parsed.send().payload(), payload) << "case " << i;
    ASSERT_EQ(parsed.send().binary(), binary) << "case " << i;
    ASSERT_EQ(std::vector<std::uint64_t>(parsed.send().conn_ids().begin(), parsed.send().conn_ids().end()), ids);
    if (::testing::Test::HasFailure()) FAIL() << "first failing case: " << i;
  }
}

TEST(LinkCodec, EncodeSendWithACompressedPrefixKnownBytes) {
  // Envelope{send: Send{conn_ids: [5], payload: "ab", deflated_prefix:
  // 00 0a, deflated_covers: 300}}, written out by hand.
  const std::uint64_t ids[] = {5};
  const std::string segment("\x00\x0a", 2);
  byte_buffer out;
  fg::link::encode_send(out, ids, false, span_of("ab"), {span_of(segment), 300});
  const std::string expected(
      "\x32\x0e"      // Envelope.send, 14 bytes
      "\x0a\x01\x05"  // conn_ids, packed: [5]
      "\x1a\x02"
      "ab"                // payload
      "\x22\x02\x00\x0a"  // deflated_prefix
      "\x28\xac\x02",     // deflated_covers: 300
      16);
  EXPECT_EQ(string_of(out.span().subspan(fg::link::header_size)), expected);
}

TEST(LinkCodec, EncodeSendLeavesOutZeroCoversAndAnAbsentSegment) {
  const std::uint64_t ids[] = {1, 2, 1ull << 40};
  const std::string payload = "{\"room\":\"lobby\",\"offset\":7}";
  const std::string segment("\xaa\x00\n\xff", 4);

  // A segment covering nothing: field 4 only.
  byte_buffer zero;
  const std::size_t n = fg::link::encode_send(zero, ids, true, span_of(payload), {span_of(segment), 0});
  pb::Envelope e;
  auto* s = e.mutable_send();
  s->mutable_conn_ids()->Assign(std::begin(ids), std::end(ids));
  s->set_binary(true);
  s->set_payload(payload);
  s->set_deflated_prefix(segment);
  expect_encoded_as(zero, n, e);
  EXPECT_EQ(send_field_numbers(zero), (std::vector<std::uint32_t>{1, 2, 3, 4}));

  // No segment: neither field, whatever covers says; the bytes of a plain Send.
  for (const std::size_t covers : {std::size_t{0}, std::size_t{9}}) {
    byte_buffer none;
    const std::size_t m = fg::link::encode_send(none, ids, true, span_of(payload), {{}, covers});
    s->clear_deflated_prefix();
    expect_encoded_as(none, m, e);
    EXPECT_EQ(send_field_numbers(none), (std::vector<std::uint32_t>{1, 2, 3}));
    byte_buffer plain;
    fg::link::encode_send(plain, ids, true, span_of(payload));
    EXPECT_EQ(string_of(none.span()), string_of(plain.span()));
  }

  // Both fields, after the payload, and an empty payload with a segment.
  byte_buffer both;
  fg::link::encode_send(both, {}, false, {}, {span_of(segment), 3});
  EXPECT_EQ(send_field_numbers(both), (std::vector<std::uint32_t>{4, 5}));
}

TEST(LinkCodec, EncodeSendWithACompressedPrefixAppends) {
  const std::uint64_t ids[] = {3};
  const std::string segment("\x01\x02\x03", 3);
  byte_buffer out;
  const std::size_t first = fg::link::encode_send(out, ids, false, span_of("one"), {span_of(segment), 2});
  const std::size_t second = fg::link::encode_send(out, ids, true, span_of("two!"), {span_of(segment), 4});
  EXPECT_EQ(out.size(), first + second);
  decoder d;
  decode_error err{};
  const auto got = decode_all(d, out.span(), &err);
  EXPECT_EQ(err, decode_error::none);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].send().payload(), "one");
  EXPECT_EQ(got[0].send().deflated_covers(), 2u);
  EXPECT_EQ(got[1].send().payload(), "two!");
  EXPECT_EQ(got[1].send().deflated_prefix(), segment);
  EXPECT_EQ(got[1].send().deflated_covers(), 4u);
}

TEST(LinkCodec, ErrorNamesAreDistinct) {
  std::set<std::string_view> names;
  for (auto e : {decode_error::none, decode_error::bad_magic, decode_error::bad_version, decode_error::too_large,
                 decode_error::malformed})
    names.insert(fg::link::to_string(e));
  EXPECT_EQ(names.size(), 5u);
}

}  // namespace
