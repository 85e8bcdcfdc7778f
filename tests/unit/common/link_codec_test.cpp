// The link codec: framing, round trips, splits at every offset, and each
// decode error (checked before any protobuf is parsed, and final).
#include "common/link/codec.hpp"

#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

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

TEST(LinkCodec, ErrorNamesAreDistinct) {
  std::set<std::string_view> names;
  for (auto e : {decode_error::none, decode_error::bad_magic, decode_error::bad_version, decode_error::too_large,
                 decode_error::malformed})
    names.insert(fg::link::to_string(e));
  EXPECT_EQ(names.size(), 5u);
}

}  // namespace
