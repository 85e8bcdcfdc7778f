// One message for many connections (a worker's Send), framed at most once
// per parameter set among its recipients: once plain, and once compressed
// per distinct window size, each built on first need. A fan-out to a
// thousand connections without server context takeover costs one
// compression, and every recipient gets the same bytes. A message that came
// with its publisher's compression (a worker's --publish-deflate) costs
// none for the recipients whose window fits it: one frame serves them all.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflated_prefix.hpp"
#include "gateway/net/message_compressor.hpp"
#include "gateway/ws/deflate_options.hpp"
#include "gateway/ws/protocol.hpp"

namespace fg::gateway {

class broadcast_frames {
 public:
  explicit broadcast_frames(message_compressor& c) : compressor_(c) {}

  // A new message, with its publisher's compression if it has one; both
  // must outlive the frames' use.
  void reset(ws::opcode op, std::span<const std::uint8_t> payload, const deflated_prefix& pre = {});
  [[nodiscard]] ws::opcode op() const noexcept { return op_; }
  [[nodiscard]] std::span<const std::uint8_t> payload() const noexcept { return payload_; }

  // The frame for a connection that negotiated `p` (p.server_takeover
  // false: a connection with its own context compresses for itself).
  std::span<const std::uint8_t> frame_for(const ws::deflate_params& p);

 private:
  enum class built : std::uint8_t { not_yet, compressed, plain };
  std::span<const std::uint8_t> plain();
  static void write_frame(byte_buffer& out, ws::opcode op, std::span<const std::uint8_t> payload, bool compressed);

  message_compressor& compressor_;
  ws::opcode op_ = ws::opcode::text;
  std::span<const std::uint8_t> payload_;
  byte_buffer plain_;
  bool plain_built_ = false;
  std::array<byte_buffer, 8> compressed_{};  // by window bits 8..15
  std::array<built, 8> state_{};
  deflated_prefix pre_;
  byte_buffer from_publisher_;  // for every window pre_ fits
  built publisher_state_ = built::not_yet;
};

}  // namespace fg::gateway
