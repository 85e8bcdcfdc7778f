#include "gateway/ws/frame_parser.hpp"

#include <cstring>

namespace fg::ws {

error frame_parser::on_header(const std::uint8_t* h, std::size_t header_size, const parser_limits& lim,
                              frame_header& f) {
  const std::uint8_t b0 = h[0];
  const std::uint8_t b1 = h[1];
  const bool fin = (b0 & 0x80) != 0;
  const bool rsv1 = (b0 & 0x40) != 0;
  const auto op = static_cast<opcode>(b0 & 0x0F);

  if ((b0 & 0x30) != 0 || (rsv1 && !lim.allow_rsv1)) return error::reserved_bits;
  switch (op) {
    case opcode::continuation:
    case opcode::text:
    case opcode::binary:
    case opcode::close:
    case opcode::ping:
    case opcode::pong: break;
    default: return error::reserved_opcode;
  }
  if ((b1 & 0x80) == 0) return error::unmasked_frame;

  std::uint64_t length = b1 & 0x7F;
  std::size_t off = 2;
  if (length == 126) {
    length = (std::uint64_t{h[2]} << 8) | h[3];
    off = 4;
  } else if (length == 127) {
    length = 0;
    for (int i = 0; i < 8; ++i) length = (length << 8) | h[2 + i];
    off = 10;
    if (length >> 63) return error::invalid_length;
  }
  std::memcpy(mask_.data(), h + off, 4);
  (void)header_size;

  if (is_control(op)) {
    if (!fin) return error::control_frame_fragmented;
    if (length > 125) return error::control_frame_too_long;
    if (rsv1) return error::compressed_control_frame;  // RFC 7692 §6: never on control frames
  } else if (op == opcode::continuation) {
    if (!in_message_) return error::continuation_without_start;
    if (rsv1) return error::compressed_continuation;  // RFC 7692 §6: RSV1 only on the first frame
    if (++fragments_ > lim.max_fragments) return error::too_many_fragments;
    const std::uint64_t limit = compressed_ ? lim.compressed_limit() : lim.max_message_size;
    if (length > limit - message_size_) return error::message_too_big;
    message_size_ += length;
    in_message_ = !fin;
  } else {
    if (in_message_) return error::data_frame_in_fragmented;
    compressed_ = rsv1;
    if (length > (rsv1 ? lim.compressed_limit() : lim.max_message_size)) return error::message_too_big;
    message_size_ = length;
    fragments_ = 1;
    in_message_ = !fin;
  }

  f.op = op;
  f.fin = fin;
  f.rsv1 = rsv1;
  f.length = length;
  remaining_ = length;
  mask_phase_ = 0;
  return error::none;
}

}  // namespace fg::ws
