#include "common/link/send_encoder.hpp"

#include "common/link/codec.hpp"
#include "common/link/wire_format.hpp"

namespace fg::link {

std::size_t encode_send(byte_buffer& out, std::span<const std::uint64_t> conn_ids, bool binary,
                        std::span<const std::uint8_t> payload, send_compression pre) {
  using namespace wire;
  std::size_t ids = 0;
  for (const std::uint64_t id : conn_ids) ids += varint_size(id);
  const bool compressed = !pre.segment.empty();
  const std::size_t body =
      (ids == 0 ? 0 : 1 + varint_size(ids) + ids) + (binary ? 2 : 0) + bytes_field_size(payload.size()) +
      (compressed ? bytes_field_size(pre.segment.size()) + (pre.covers == 0 ? 0 : 1 + varint_size(pre.covers)) : 0);
  const std::size_t envelope = 1 + varint_size(body) + body;
  const std::size_t total = header_size + envelope;
  std::uint8_t* p = put_frame_header(out.prepare(total), static_cast<std::uint32_t>(envelope));
  *p++ = tag(6, wire_type::length_delimited);  // Envelope.send
  p = put_varint(p, body);
  if (ids != 0) {
    *p++ = tag(1, wire_type::length_delimited);  // Send.conn_ids, packed
    p = put_varint(p, ids);
    for (const std::uint64_t id : conn_ids) p = put_varint(p, id);
  }
  if (binary) {
    *p++ = tag(2, wire_type::varint);
    *p++ = 1;
  }
  if (!payload.empty()) {
    *p++ = tag(3, wire_type::length_delimited);
    p = put_bytes(p, payload);
  }
  if (compressed) {
    *p++ = tag(4, wire_type::length_delimited);  // Send.deflated_prefix
    p = put_bytes(p, pre.segment);
    if (pre.covers != 0) {
      *p++ = tag(5, wire_type::varint);  // Send.deflated_covers
      put_varint(p, pre.covers);
    }
  }
  out.commit(total);
  return total;
}

}  // namespace fg::link
