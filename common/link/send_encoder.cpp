#include "common/link/send_encoder.hpp"

#include "common/link/codec.hpp"
#include "common/link/wire_format.hpp"

namespace fg::link {

std::size_t encode_send(byte_buffer& out, std::span<const std::uint64_t> conn_ids, bool binary,
                        std::span<const std::uint8_t> payload) {
  using namespace wire;
  std::size_t ids = 0;
  for (const std::uint64_t id : conn_ids) ids += varint_size(id);
  const std::size_t body =
      (ids == 0 ? 0 : 1 + varint_size(ids) + ids) + (binary ? 2 : 0) + bytes_field_size(payload.size());
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
    put_bytes(p, payload);
  }
  out.commit(total);
  return total;
}

}  // namespace fg::link
