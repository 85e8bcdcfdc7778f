#pragma once
// Client side of RFC 6455 framing: masked frames out, unmasked server frames in.
#include <cstddef>
#include <cstdint>

#include "byte_buffer.hpp"

namespace loadgen {

enum class opcode : std::uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

inline bool is_control(std::uint8_t op) noexcept { return (op & 0x8) != 0; }

// Bytes a masked client frame with this payload length takes on the wire.
std::size_t client_frame_size(std::size_t payload_len) noexcept;

// Appends one final (FIN) masked frame. The payload is copied then masked in
// place, a 64-bit word at a time.
void append_client_frame(byte_buffer& out, opcode op, const std::uint8_t* payload, std::size_t len,
                         std::uint32_t mask_key);

// XORs data with the 4-byte key (key bytes in wire order), starting at key
// byte 0. Word-wide because byte-by-byte unmasking is a known hot spot.
void apply_mask(std::uint8_t* data, std::size_t len, std::uint32_t mask_key) noexcept;

struct frame_header {
  bool fin = false;
  std::uint8_t rsv = 0;  // must be 0: no extension is negotiated
  std::uint8_t op = 0;
  bool masked = false;  // a server must not mask
  std::size_t header_len = 0;
  std::uint64_t payload_len = 0;
};

enum class parse_status { need_more, ok };

// Parses a frame header at data[0..avail); need_more until it is complete.
parse_status parse_frame_header(const std::uint8_t* data, std::size_t avail, frame_header& h) noexcept;

}  // namespace loadgen
