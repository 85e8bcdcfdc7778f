#include "worker/broker/inbound_check.hpp"

#include <algorithm>
#include <span>

#include "common/utf8.hpp"

namespace fg::worker {

const char* inbound_reject_name(inbound_reject r) noexcept {
  switch (r) {
    case inbound_reject::too_big: return "too_big";
    case inbound_reject::invalid_utf8: return "invalid_utf8";
    case inbound_reject::foreign: return "foreign";
    case inbound_reject::forged_seq: return "forged_seq";
    case inbound_reject::bad_mac: return "bad_mac";
  }
  return "unknown";
}

inbound_verdict check_inbound(std::string_view message, const inbound_policy& policy) noexcept {
  inbound_verdict v;
  v.envelope = parse_redis_envelope(message);
  v.payload = v.envelope ? v.envelope->payload : message;
  if (policy.mac != nullptr &&
      (!v.envelope || !v.envelope->is_signed() ||
       !policy.mac->verify(policy.channel, v.envelope->signed_prefix, v.envelope->signed_body, v.envelope->mac))) {
    v.reject = inbound_reject::bad_mac;
    return v;
  }
  if (!v.envelope && policy.foreign == foreign_policy::drop) {
    v.reject = inbound_reject::foreign;
    return v;
  }
  // Size first: it costs nothing and bounds the UTF-8 scan.
  if (policy.max_payload != 0 && v.payload.size() > policy.max_payload) {
    v.reject = inbound_reject::too_big;
    return v;
  }
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(v.payload.data()), v.payload.size());
  if (!is_valid_utf8(bytes)) {
    v.reject = inbound_reject::invalid_utf8;
    return v;
  }
  if (v.envelope &&
      (policy.max_payload == 0 || v.envelope->segment.bytes.size() <= policy.max_payload - v.payload.size()))
    v.segment = v.envelope->segment;
  return v;
}

std::size_t delivery_limit(std::uint32_t worker_max_envelope, std::uint64_t gateway_max_payload) noexcept {
  const std::size_t own =
      worker_max_envelope > send_envelope_overhead ? worker_max_envelope - send_envelope_overhead : 1;
  if (gateway_max_payload == 0) return own;
  return static_cast<std::size_t>(std::min<std::uint64_t>(own, gateway_max_payload));
}

}  // namespace fg::worker
