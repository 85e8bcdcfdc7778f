// What the Redis broker checks in every message that arrives on a room
// channel before an app sees it. Anyone who can reach Redis can PUBLISH,
// so a channel message is untrusted input: it must not be larger than
// what the worker and the gateway accept (an oversized Send envelope
// closes the whole link, and with it every connection of the worker), it
// must be UTF-8 (rooms deliver it as a text frame, RFC 6455 §8.1), and a
// message without the framegate header is dropped unless the operator
// asked for foreign messages (--redis-foreign deliver). With a cluster
// secret, a message without a valid MAC is dropped before anything else.
//
// Pure: no I/O; the broker counts the verdicts (docs/METRICS.md,
// framegate_worker_broker_rejected_total{reason}).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "worker/broker/envelope_mac.hpp"
#include "worker/broker/redis_envelope.hpp"

namespace fg::worker {

// Why a channel message was not delivered. One metric label each.
enum class inbound_reject : std::uint8_t {
  too_big,       // payload above the smaller of the worker's and the gateways' limits
  invalid_utf8,  // payload is not UTF-8: it would reach browsers as a broken text frame
  foreign,       // no framegate header, and --redis-foreign is drop
  forged_seq,    // our own origin with a seq we never published
  bad_mac,       // with --redis-secret-file: MAC missing (version 1, foreign) or wrong
};
inline constexpr std::size_t inbound_reject_count = 5;
using inbound_reject_counts = std::array<std::uint64_t, inbound_reject_count>;

// The metric label of `r`.
const char* inbound_reject_name(inbound_reject r) noexcept;

enum class foreign_policy : std::uint8_t { drop, deliver };

struct inbound_policy {
  std::size_t max_payload = 0;  // largest payload an app may be handed; 0: no limit known
  foreign_policy foreign = foreign_policy::drop;
  // With a secret (--redis-secret-file): every message must carry a valid
  // MAC for `channel`; foreign ones cannot, whatever `foreign` says.
  const envelope_mac* mac = nullptr;
  std::string_view channel;
};

// The verdict on one channel message: either a reason to drop it, or the
// payload to deliver and, for a framegate message, its header.
struct inbound_verdict {
  std::optional<inbound_reject> reject;
  std::optional<redis_envelope> envelope;  // nullopt: foreign
  std::string_view payload;                // what the apps get (points into the message)
  // The publisher's compression, when it came with one that fits the
  // limit together with the payload (both travel in the Send).
  deflated_segment segment;
};

inbound_verdict check_inbound(std::string_view message, const inbound_policy& policy) noexcept;

// The limit a broker delivery must fit: the worker's own (its link
// envelope limit less the envelope's framing) and the gateways' (what the
// Welcomes told; 0 where not told). 0 when none is known.
std::size_t delivery_limit(std::uint32_t worker_max_envelope, std::uint64_t gateway_max_payload) noexcept;

// Room deliveries leave in a Send envelope: payload, kind and connection
// ids. This much is kept for the rest.
inline constexpr std::size_t send_envelope_overhead = 64;

}  // namespace fg::worker
