#include "ws_codec.hpp"

#include <cstring>

namespace loadgen {

std::size_t client_frame_size(std::size_t payload_len) noexcept {
  const std::size_t ext = payload_len < 126 ? 0 : payload_len <= 0xFFFF ? 2 : 8;
  return 2 + ext + 4 + payload_len;
}

void apply_mask(std::uint8_t* data, std::size_t len, std::uint32_t mask_key) noexcept {
  std::uint8_t key[4];
  std::memcpy(key, &mask_key, 4);
  std::uint64_t wide = 0;
  std::memcpy(&wide, key, 4);
  std::memcpy(reinterpret_cast<std::uint8_t*>(&wide) + 4, key, 4);
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    w ^= wide;
    std::memcpy(data + i, &w, 8);
  }
  for (; i < len; ++i) data[i] ^= key[i & 3];  // i is a multiple of 8 here, so the key phase is kept
}

void append_client_frame(byte_buffer& out, opcode op, const std::uint8_t* payload, std::size_t len,
                         std::uint32_t mask_key) {
  std::uint8_t* p = out.prepare(client_frame_size(len));
  std::uint8_t* const start = p;
  *p++ = static_cast<std::uint8_t>(0x80 | static_cast<std::uint8_t>(op));
  if (len < 126) {
    *p++ = static_cast<std::uint8_t>(0x80 | len);
  } else if (len <= 0xFFFF) {
    *p++ = 0x80 | 126;
    *p++ = static_cast<std::uint8_t>(len >> 8);
    *p++ = static_cast<std::uint8_t>(len);
  } else {
    *p++ = 0x80 | 127;
    const auto l64 = static_cast<std::uint64_t>(len);
    for (int s = 56; s >= 0; s -= 8) *p++ = static_cast<std::uint8_t>(l64 >> s);
  }
  std::memcpy(p, &mask_key, 4);
  p += 4;
  if (len) {
    std::memcpy(p, payload, len);
    apply_mask(p, len, mask_key);
  }
  out.commit(static_cast<std::size_t>(p - start) + len);
}

parse_status parse_frame_header(const std::uint8_t* data, std::size_t avail, frame_header& h) noexcept {
  if (avail < 2) return parse_status::need_more;
  h.fin = (data[0] & 0x80) != 0;
  h.rsv = static_cast<std::uint8_t>(data[0] & 0x70);
  h.op = static_cast<std::uint8_t>(data[0] & 0x0F);
  h.masked = (data[1] & 0x80) != 0;
  const std::uint8_t len7 = data[1] & 0x7F;
  std::size_t pos = 2;
  if (len7 == 126) {
    if (avail < 4) return parse_status::need_more;
    h.payload_len = (std::uint64_t{data[2]} << 8) | data[3];
    pos = 4;
  } else if (len7 == 127) {
    if (avail < 10) return parse_status::need_more;
    h.payload_len = 0;
    for (int i = 0; i < 8; ++i) h.payload_len = (h.payload_len << 8) | data[2 + i];
    pos = 10;
  } else {
    h.payload_len = len7;
  }
  if (h.masked) pos += 4;
  if (avail < pos) return parse_status::need_more;
  h.header_len = pos;
  return parse_status::ok;
}

}  // namespace loadgen
