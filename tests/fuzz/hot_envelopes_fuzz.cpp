// Fuzzes the link's allocation-free readers (common/link/hot_envelopes.hpp)
// against the generated code on the same bytes: an Envelope body (no frame
// header), as a worker or a gateway could send it. Whatever send_view or
// message_view takes, libprotobuf must accept and read identically; what
// they decline is libprotobuf's to judge, so nothing is checked there. A
// Send libprotobuf reads is re-encoded by encode_send and must be taken by
// send_view with the same fields (the encoder and the reader agree).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/hot_envelopes.hpp"
#include "common/link/send_encoder.hpp"
#include "framegate/link.pb.h"
#include "tests/fuzz/check.hpp"

namespace {
using fg::fuzz::check;
namespace pb = framegate::link;

std::string string_of(std::span<const std::uint8_t> b) { return {b.begin(), b.end()}; }

// The view's fields equal libprotobuf's Send.
void check_same(const fg::link::send_view& v, const pb::Send& s) {
  check(v.binary() == s.binary());
  check(string_of(v.payload()) == s.payload());
  check(v.recipient_count() == static_cast<std::size_t>(s.conn_ids_size()));
  int i = 0;
  v.for_each_recipient([&](std::uint64_t id) {
    check(i < s.conn_ids_size() && id == s.conn_ids(i));
    ++i;
  });
  check(i == s.conn_ids_size());
  // The publisher's compression: taken when it claims no more than the payload.
  const fg::deflated_prefix pre = v.deflated();
  const bool usable = !s.deflated_prefix().empty() && s.deflated_covers() <= s.payload().size();
  check(pre.present() == usable);
  if (usable) check(string_of(pre.segment) == s.deflated_prefix() && pre.covers == s.deflated_covers());
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> body(data, size);
  pb::Envelope e;
  const bool parsed = e.ParseFromArray(data, static_cast<int>(size));

  if (const auto send = fg::link::send_view::parse(body)) {
    check(parsed && e.body_case() == pb::Envelope::kSend);
    check_same(*send, e.send());
  }
  if (const auto m = fg::link::message_view::parse(body)) {
    check(parsed && e.body_case() == pb::Envelope::kMessage);
    const pb::Message& g = e.message();
    check(m->conn_id == g.conn_id() && m->binary == g.binary() && m->seq == g.seq());
    check(string_of(m->payload) == g.payload());
  }
  if (parsed && e.body_case() == pb::Envelope::kSend) {
    const pb::Send& s = e.send();
    fg::byte_buffer again;
    const auto bytes = [](const std::string& b) {
      return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
    };
    fg::link::encode_send(again, {s.conn_ids().data(), static_cast<std::size_t>(s.conn_ids_size())}, s.binary(),
                          bytes(s.payload()), {bytes(s.deflated_prefix()), s.deflated_covers()});
    const auto reread = fg::link::send_view::parse(again.span().subspan(fg::link::header_size));
    check(reread.has_value());
    check_same(*reread, s);
  }
  return 0;
}
