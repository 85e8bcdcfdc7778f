// Hand-encoding of the one envelope on the hot path: Envelope{message:
// Message{conn_id, binary, payload, seq}}, written straight into the
// link's output buffer. Going through the generated classes would copy
// every payload into a std::string first; this writes it once. The bytes
// are standard protobuf wire format, decoded by the generated code
// (tests check that the two agree).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/byte_buffer.hpp"
#include "common/link/codec.hpp"
#include "common/link/wire_format.hpp"

namespace fg::link {

namespace wire {
// Field tags of Envelope{message: Message}.
constexpr std::uint8_t envelope_message_tag = tag(4, wire_type::length_delimited);
constexpr std::uint8_t conn_id_tag = tag(1, wire_type::varint);
constexpr std::uint8_t binary_tag = tag(2, wire_type::varint);
constexpr std::uint8_t payload_tag = tag(3, wire_type::length_delimited);
constexpr std::uint8_t seq_tag = tag(4, wire_type::varint);
}  // namespace wire

// Appends a framed Envelope{message} to `out`; returns where in `out` the
// payload's bytes begin (the gateway's ledger keeps them there for replay).
inline std::size_t encode_message(byte_buffer& out, std::uint64_t conn_id, bool binary,
                                  std::span<const std::uint8_t> payload, std::uint64_t seq) {
  using namespace wire;
  const std::size_t body = 1 + varint_size(conn_id) + (binary ? 2 : 0) + bytes_field_size(payload.size()) +
                           (seq != 0 ? 1 + varint_size(seq) : 0);
  const std::size_t envelope = 1 + varint_size(body) + body;
  const std::size_t total = header_size + envelope;
  std::uint8_t* const start = out.prepare(total);
  std::uint8_t* p = put_frame_header(start, static_cast<std::uint32_t>(envelope));
  *p++ = envelope_message_tag;
  p = put_varint(p, body);
  *p++ = conn_id_tag;
  p = put_varint(p, conn_id);
  if (binary) {
    *p++ = binary_tag;
    *p++ = 1;
  }
  std::size_t payload_at = out.size() + static_cast<std::size_t>(p - start);
  if (!payload.empty()) {
    *p++ = payload_tag;
    p = put_bytes(p, payload);
    payload_at = out.size() + static_cast<std::size_t>(p - start) - payload.size();
  }
  if (seq != 0) {
    *p++ = seq_tag;
    put_varint(p, seq);
  }
  out.commit(total);
  return payload_at;
}

}  // namespace fg::link
