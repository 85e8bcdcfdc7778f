// Server-to-client frame headers (RFC 6455 §5.2). Server frames are never
// masked (§5.1), so a header is 2, 4 or 10 bytes and the payload follows
// unchanged: the same bytes can be written to every recipient of a broadcast.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gateway/ws/protocol.hpp"

namespace fg::ws {

inline constexpr std::size_t max_frame_header_size = 10;

constexpr std::size_t frame_header_size(std::uint64_t payload_size) noexcept {
  return payload_size < 126 ? 2 : payload_size <= 0xFFFF ? 4 : 10;
}

// Writes the header into `out` (at least max_frame_header_size bytes) and
// returns its length.
inline std::size_t write_frame_header(std::uint8_t* out, opcode op, std::uint64_t payload_size, bool fin = true,
                                      bool rsv1 = false) noexcept {
  out[0] = static_cast<std::uint8_t>((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | static_cast<std::uint8_t>(op));
  if (payload_size < 126) {
    out[1] = static_cast<std::uint8_t>(payload_size);
    return 2;
  }
  if (payload_size <= 0xFFFF) {
    out[1] = 126;
    out[2] = static_cast<std::uint8_t>(payload_size >> 8);
    out[3] = static_cast<std::uint8_t>(payload_size);
    return 4;
  }
  out[1] = 127;
  for (int i = 0; i < 8; ++i) out[2 + i] = static_cast<std::uint8_t>(payload_size >> (56 - 8 * i));
  return 10;
}

}  // namespace fg::ws
