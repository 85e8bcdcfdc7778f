// Fuzzes what the Redis broker does with a channel message (anyone who can
// reach Redis writes those): the envelope decoder and the inbound check.
// A message the check lets through must fit the limit and be UTF-8, a
// decoded envelope must encode back to the same bytes, and the dedup
// window must skip the copy of anything it just accepted.
//
// Input: [flags][message...]; flags bit 0: --redis-foreign deliver,
// bits 1-3: n, payload limit 0 (none) for n = 0, else 4 << n bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/utf8.hpp"
#include "tests/fuzz/check.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/broker/publish_dedup.hpp"
#include "worker/broker/redis_envelope.hpp"

using fg::fuzz::check;
namespace fw = fg::worker;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);

  fw::inbound_policy policy;
  policy.foreign = (flags & 1) != 0 ? fw::foreign_policy::deliver : fw::foreign_policy::drop;
  const unsigned n = (flags >> 1) & 7;
  policy.max_payload = n == 0 ? 0 : std::size_t{4} << n;

  const fw::inbound_verdict v = fw::check_inbound(message, policy);
  const auto env = fw::parse_redis_envelope(message);
  check(env.has_value() == v.envelope.has_value());
  if (env) {
    check(fw::encode_redis_envelope(env->origin, env->seq, env->payload) == message);
    check(v.payload.data() == message.data() + fw::redis_envelope_header_bytes);
  } else {
    check(v.payload == message);
    if (policy.foreign == fw::foreign_policy::drop) check(v.reject == fw::inbound_reject::foreign);
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
