// Fuzzes what the Redis broker does with a channel message (anyone who can
// reach Redis writes those): the envelope decoder, the MAC check and the
// inbound check. A message the check lets through must fit the limit, be
// UTF-8 and, with a secret, carry the MAC the secret gives; a decoded
// envelope must encode back to the same bytes; a publisher's compression
// (versions 3 and 4) must lie inside the message, cover no more than the
// payload, and reach the apps only with a message let through and within
// the limit together with it; the dedup window must skip
// the copy of anything it just accepted. The offset line Redis puts in
// front of a numbered message must parse only in its one canonical form.
//
// Input: [flags][message...]; flags bit 0: --redis-foreign deliver,
// bits 1-3: n, payload limit 0 (none) for n = 0, else 4 << n bytes;
// bit 4: a secret ("fuzz") on channel "framegate:room:R".
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/utf8.hpp"
#include "tests/fuzz/check.hpp"
#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/broker/publish_dedup.hpp"
#include "worker/broker/redis_envelope.hpp"
#include "worker/broker/room_offset_header.hpp"

using fg::fuzz::check;
namespace fw = fg::worker;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);

  if (const auto numbered = fw::parse_room_offset_header(message)) {
    check(fw::valid_room_epoch(numbered->epoch));
    check(numbered->offset >= 1 && numbered->offset <= fw::max_room_offset);
    check(numbered->rest.data() + numbered->rest.size() == message.data() + message.size());
    const std::string canonical = "fgo " + std::string(numbered->epoch) + " " + std::to_string(numbered->offset) +
                                  "\n" + std::string(numbered->rest);
    check(canonical == message);
  }

  fw::inbound_policy policy;
  policy.foreign = (flags & 1) != 0 ? fw::foreign_policy::deliver : fw::foreign_policy::drop;
  const unsigned n = (flags >> 1) & 7;
  policy.max_payload = n == 0 ? 0 : std::size_t{4} << n;
  static const fw::envelope_mac mac("fuzz");
  constexpr std::string_view channel = "framegate:room:R";
  if ((flags & 16) != 0) {
    policy.mac = &mac;
    policy.channel = channel;
  }

  const fw::inbound_verdict v = fw::check_inbound(message, policy);
  const auto env = fw::parse_redis_envelope(message);
  check(env.has_value() == v.envelope.has_value());
  bool mac_ok = false;
  if (env) {
    check(env->version >= 1 && env->version <= 4);
    const bool compressed = env->version >= 3;
    check(env->segment.present() == compressed);
    const std::size_t header = env->is_signed() ? fw::redis_signed_header_bytes : fw::redis_envelope_header_bytes;
    const std::size_t before_payload =
        header + (compressed ? fw::redis_segment_fields_bytes + env->segment.bytes.size() : 0);
    check(v.payload.data() == message.data() + before_payload);
    check(env->payload.size() == message.size() - before_payload);
    if (compressed) {
      check(env->segment.bytes.data() == message.data() + header + fw::redis_segment_fields_bytes);
      check(env->segment.covers <= env->payload.size());
    }
  }
  if (env && !env->is_signed()) {
    check(fw::encode_redis_envelope(env->origin, env->seq, env->payload, env->segment) == message);
  } else if (env) {
    check(env->signed_body.data() + env->signed_body.size() == message.data() + message.size());
    const auto want = mac.compute(channel, env->signed_prefix, env->signed_body);
    mac_ok = std::string_view(want.data(), want.size()) == env->mac;
    check(mac.verify(channel, env->signed_prefix, env->signed_body, env->mac) == mac_ok);
    // Signing what was decoded gives back the message exactly when its MAC was right.
    const std::string signed_again =
        fw::encode_signed_redis_envelope(mac, channel, env->origin, env->seq, env->payload, env->segment);
    check((signed_again == message) == mac_ok);
    const auto again = fw::parse_redis_envelope(signed_again);
    check(again && mac.verify(channel, again->signed_prefix, again->signed_body, again->mac));
  } else {
    check(v.payload == message);
    if (policy.mac == nullptr && policy.foreign == fw::foreign_policy::drop)
      check(v.reject == fw::inbound_reject::foreign);
  }
  if (policy.mac != nullptr && !mac_ok) check(v.reject == fw::inbound_reject::bad_mac);
  if (v.segment.present()) {
    check(!v.reject && env && v.segment.bytes.data() == env->segment.bytes.data());
    check(policy.max_payload == 0 || v.segment.bytes.size() + v.payload.size() <= policy.max_payload);
  }
  if (!v.reject) {
    check(policy.max_payload == 0 || v.payload.size() <= policy.max_payload);
    check(fg::is_valid_utf8({reinterpret_cast<const std::uint8_t*>(v.payload.data()), v.payload.size()}));
  } else {
    check(fw::inbound_reject_name(*v.reject) != std::string_view("unknown"));
  }

  if (env) {
    fw::publish_dedup dedup(16);
    check(dedup.accept(env->origin, env->payload, env->seq));
    check(!dedup.accept(env->origin, env->payload, env->seq));
    check(dedup.accept(env->origin, env->payload, env->seq + 1));
  }
  return 0;
}
