// What the Redis broker puts in a PUBLISH: the app's payload behind a
// fixed 38-byte text header naming the publishing worker and its sequence.
//
//   offset 0   "fg1 "              magic and format version
//   offset 4   16 lower-case hex   origin: random per worker process
//   offset 20  ' '
//   offset 21  16 lower-case hex   seq: per origin, +1 per publish, from 1
//   offset 37  '\n'
//   offset 38  payload             the exact bytes every member receives
//
// Channel: <prefix>room:<room>, e.g. "framegate:room:lobby".
//
// With --redis-secret-file the header is version 2, authenticated:
//
//   offset 0   "fg2 "              magic and format version
//   offset 4   origin, ' ', seq    as in version 1
//   offset 37  ' '
//   offset 38  64 lower-case hex   HMAC-SHA256 over channel, NUL, bytes 0-36, payload
//   offset 102 '\n'
//   offset 103 payload
//
// A worker with a secret drops a message without a valid MAC (versions 1
// and 3 included); a worker without one reads every version (and cannot
// check the MAC).
//
// With --publish-deflate the publisher compresses the payload once
// (common/deflate/deflated_prefix.hpp), and the header is version 3 (like
// 1) or 4 (like 2, the MAC covering all that follows the header), its
// payload preceded by the compression:
//
//   offset 0   8 lower-case hex    segment size S (at least 1)
//   offset 8   8 lower-case hex    covers: how many bytes of the payload
//                                  the segment compresses (window 15)
//   offset 16  S bytes             the segment (binary)
//   offset 16+S payload            as in versions 1 and 2
//
// A worker built before versions 3 and 4 existed takes them for foreign
// messages (dropped, or delivered raw with --redis-foreign deliver):
// enable --publish-deflate once every worker on the Redis reads them.
//
// The header lets receivers drop the copy of a publish that is sent again
// after a reconnect (seq not above the last one seen from that origin: one
// publish connection per origin keeps its seqs in order in Redis), and lets
// the origin skip what it already delivered locally during an outage.
// A message without this header (another publisher, redis-cli) is foreign:
// dropped unless --redis-foreign deliver (inbound_check.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "worker/app.hpp"

namespace fg::worker {

inline constexpr std::size_t redis_envelope_header_bytes = 38;
inline constexpr std::size_t redis_signed_header_bytes = 103;
inline constexpr std::size_t redis_signed_prefix_bytes = 37;   // what the MAC covers of the header
inline constexpr std::size_t redis_segment_fields_bytes = 16;  // versions 3 and 4: S and covers

struct redis_envelope {
  int version = 1;
  std::uint64_t origin = 0;
  std::uint64_t seq = 0;
  std::string_view payload;        // points into the parsed bytes
  deflated_segment segment;        // versions 3 and 4
  std::string_view signed_prefix;  // versions 2 and 4: header bytes the MAC covers
  std::string_view signed_body;    // versions 2 and 4: what follows the header, also covered
  std::string_view mac;            // versions 2 and 4: 64 hex digits (unchecked)

  [[nodiscard]] bool is_signed() const noexcept { return version == 2 || version == 4; }
};

// Version 1 (3 with a segment) header then payload, ready for PUBLISH.
std::string encode_redis_envelope(std::uint64_t origin, std::uint64_t seq, std::string_view payload,
                                  deflated_segment segment = {});
// Version 2 (4 with a segment), signed with `mac` for `channel`.
class envelope_mac;
std::string encode_signed_redis_envelope(const envelope_mac& mac, std::string_view channel, std::uint64_t origin,
                                         std::uint64_t seq, std::string_view payload, deflated_segment segment = {});

// The envelope in `bytes`, or nullopt when they do not start with a valid
// header (a foreign message).
std::optional<redis_envelope> parse_redis_envelope(std::string_view bytes) noexcept;

}  // namespace fg::worker
