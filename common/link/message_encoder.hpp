// Hand-encoding of the one envelope on the hot path: Envelope{message:
// Message{conn_id, binary, payload, seq}}, written straight into the
// link's output buffer. Going through the generated classes would copy
// every payload into a std::string first; this writes it once. The bytes
// are standard protobuf wire format, decoded by the generated code
// (tests check that the two agree).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"

namespace fg::link {

namespace wire {

constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

// Field tags: (field number << 3) | wire type.
constexpr std::uint8_t envelope_message_tag = (4 << 3) | 2;
constexpr std::uint8_t conn_id_tag = (1 << 3) | 0;
constexpr std::uint8_t binary_tag = (2 << 3) | 0;
constexpr std::uint8_t payload_tag = (3 << 3) | 2;
constexpr std::uint8_t seq_tag = (4 << 3) | 0;

}  // namespace wire

// Appends a framed Envelope{message} to `out`; returns its total size.
inline std::size_t encode_message(byte_buffer& out, std::uint64_t conn_id, bool binary,
                                  std::span<const std::uint8_t> payload, std::uint64_t seq) {
  using namespace wire;
  const std::size_t body = 1 + varint_size(conn_id) + (binary ? 2 : 0) +
                           (payload.empty() ? 0 : 1 + varint_size(payload.size()) + payload.size()) +
                           (seq != 0 ? 1 + varint_size(seq) : 0);
  const std::size_t envelope = 1 + varint_size(body) + body;
  const std::size_t total = header_size + envelope;
  std::uint8_t* p = out.prepare(total);
  p[0] = magic0;
  p[1] = magic1;
  p[2] = protocol_version;
  p[3] = 0;
  p[4] = static_cast<std::uint8_t>(envelope >> 24);
  p[5] = static_cast<std::uint8_t>(envelope >> 16);
  p[6] = static_cast<std::uint8_t>(envelope >> 8);
  p[7] = static_cast<std::uint8_t>(envelope);
  p += header_size;
  *p++ = envelope_message_tag;
  p = put_varint(p, body);
  *p++ = conn_id_tag;
  p = put_varint(p, conn_id);
  if (binary) {
    *p++ = binary_tag;
    *p++ = 1;
  }
  if (!payload.empty()) {
    *p++ = payload_tag;
    p = put_varint(p, payload.size());
    std::memcpy(p, payload.data(), payload.size());
    p += payload.size();
  }
  if (seq != 0) {
    *p++ = seq_tag;
    put_varint(p, seq);
  }
  out.commit(total);
  return total;
}

}  // namespace fg::link
