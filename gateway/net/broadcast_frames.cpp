#include "gateway/net/broadcast_frames.hpp"

#include <algorithm>
#include <cstring>

#include "gateway/ws/frame_writer.hpp"

namespace fg::gateway {

void broadcast_frames::reset(ws::opcode op, std::span<const std::uint8_t> payload, const deflated_prefix& pre) {
  op_ = op;
  payload_ = payload;
  pre_ = pre;
  plain_built_ = false;
  state_.fill(built::not_yet);
  publisher_state_ = built::not_yet;
}

std::span<const std::uint8_t> broadcast_frames::frame_for(const ws::deflate_params& p) {
  if (!p.enabled) return plain();
  // A suffix beyond one stored block (not one the rooms app makes) is
  // compressed here like any message.
  if (pre_.present() && pre_.fits_window(p.server_window_bits) && payload_.size() - pre_.covers <= max_stored_suffix) {
    if (publisher_state_ == built::not_yet) {
      const auto packed = compressor_.from_publisher(payload_, pre_);
      if (packed) write_frame(from_publisher_, op_, *packed, true);
      publisher_state_ = packed ? built::compressed : built::plain;
    }
    return publisher_state_ == built::compressed ? from_publisher_.span() : plain();
  }
  // zlib compresses a negotiated 8 with 9: the two share one frame.
  const auto i = static_cast<std::size_t>(std::max<int>(p.server_window_bits, 9) - 8);
  if (state_[i] == built::not_yet) {
    if (const auto packed = compressor_.compress_shared(payload_, p.server_window_bits)) {
      write_frame(compressed_[i], op_, *packed, true);
      state_[i] = built::compressed;
    } else {
      state_[i] = built::plain;
    }
  }
  return state_[i] == built::compressed ? compressed_[i].span() : plain();
}

std::span<const std::uint8_t> broadcast_frames::plain() {
  if (!plain_built_) {
    write_frame(plain_, op_, payload_, false);
    plain_built_ = true;
  }
  return plain_.span();
}

void broadcast_frames::write_frame(byte_buffer& out, ws::opcode op, std::span<const std::uint8_t> payload,
                                   bool compressed) {
  out.clear();
  std::uint8_t* p = out.prepare(ws::max_frame_header_size + payload.size());
  const std::size_t h = ws::write_frame_header(p, op, payload.size(), true, compressed);
  if (!payload.empty()) std::memcpy(p + h, payload.data(), payload.size());
  out.commit(h + payload.size());
}

}  // namespace fg::gateway
