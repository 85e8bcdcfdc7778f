// A pure, allocation-free parser of client-to-server WebSocket frames.
//
// It is only a parser: it takes a mutable byte span (the connection's read
// buffer), unmasks payloads in place and reports frames to a handler. A
// header split across reads is held in a 14-byte scratch area; a payload
// split across reads is reported piece by piece. All frame-level rules of
// RFC 6455 §5 and the size limits are enforced here, before any byte of a
// frame reaches the handler, so nothing is allocated for a frame that will
// be refused.
//
// Handler contract:
//   ws::error on_frame_begin(const frame_header&);
//   ws::error on_frame_data(std::span<std::uint8_t> unmasked, bool frame_done);
// on_frame_data is called at least once per frame (with an empty span for an
// empty frame); frame_done is true on the frame's last piece. A handler that
// returns an error stops the parser; the error is returned by feed().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gateway/ws/protocol.hpp"
#include "gateway/ws/unmask.hpp"

namespace fg::ws {

struct frame_header {
  opcode op = opcode::continuation;
  bool fin = false;
  bool rsv1 = false;
  std::uint64_t length = 0;
};

struct parser_limits {
  std::uint64_t max_message_size = 1024 * 1024;
  std::uint32_t max_fragments = 65536;
  bool allow_rsv1 = false;  // set when permessage-deflate is negotiated
  // Payload bytes on the wire of a message with RSV1 (compressed), where the
  // limit that matters is checked on the inflated size; 0: max_message_size.
  std::uint64_t max_compressed_size = 0;
  [[nodiscard]] std::uint64_t compressed_limit() const noexcept {
    return max_compressed_size != 0 ? max_compressed_size : max_message_size;
  }
};

class frame_parser {
 public:
  frame_parser() = default;

  template <class Handler>
  error feed(std::span<std::uint8_t> in, const parser_limits& lim, Handler& handler);

  // True between the first and the last frame of a fragmented data message.
  [[nodiscard]] bool in_message() const noexcept { return in_message_; }
  // Payload bytes on the wire of the data message being read (or just ended).
  [[nodiscard]] std::uint64_t message_size() const noexcept { return message_size_; }
  [[nodiscard]] bool mid_frame() const noexcept { return in_payload_ || header_len_ != 0; }
  [[nodiscard]] error failed() const noexcept { return failed_; }
  // Frames begun so far, modulo 2^32: the difference between two calls is
  // right as long as fewer than 2^32 frames begin in between.
  [[nodiscard]] std::uint32_t frames_begun() const noexcept { return frames_begun_; }

 private:
  // Validates a complete header held in `h` (header_size bytes) and
  // describes its frame in `f`.
  error on_header(const std::uint8_t* h, std::size_t header_size, const parser_limits& lim, frame_header& f);

  static std::size_t header_size_from(std::uint8_t second_byte) noexcept {
    const std::uint8_t len7 = second_byte & 0x7F;
    std::size_t n = 2 + ((second_byte & 0x80) ? 4 : 0);
    if (len7 == 126) n += 2;
    if (len7 == 127) n += 8;
    return n;
  }

  // Every connection holds one parser: no member outlives the call that
  // needs it (the frame's header is a local of feed()), and the counter
  // fills what would be padding.
  std::uint64_t remaining_ = 0;     // payload bytes of the current frame still to come
  std::uint64_t message_size_ = 0;  // payload bytes of the open data message so far
  std::uint32_t fragments_ = 0;     // frames of the open data message so far
  mask_key mask_{};
  std::uint8_t mask_phase_ = 0;
  std::uint8_t header_len_ = 0;  // bytes held in header_ while a header is split
  bool in_payload_ = false;
  bool in_message_ = false;
  bool compressed_ = false;  // the open data message has RSV1 (permessage-deflate)
  error failed_ = error::none;
  std::uint8_t header_[14]{};
  std::uint32_t frames_begun_ = 0;
};

template <class Handler>
error frame_parser::feed(std::span<std::uint8_t> in, const parser_limits& lim, Handler& handler) {
  if (failed_ != error::none) return failed_;
  std::uint8_t* p = in.data();
  std::uint8_t* const end = p + in.size();
  while (p != end) {
    if (!in_payload_) {
      const std::size_t avail = static_cast<std::size_t>(end - p);
      const std::uint8_t* h = p;
      std::size_t need;
      if (header_len_ == 0 && avail >= 2 && avail >= (need = header_size_from(p[1]))) {
        p += need;  // the common case: the whole header is in this read
      } else {
        // Gather a split header in header_.
        while (header_len_ < 2 && p != end) header_[header_len_++] = *p++;
        if (header_len_ < 2) return error::none;
        need = header_size_from(header_[1]);
        while (header_len_ < need && p != end) header_[header_len_++] = *p++;
        if (header_len_ < need) return error::none;
        h = header_;
        header_len_ = 0;
      }
      frame_header frame;
      if (error e = on_header(h, need, lim, frame); e != error::none) return failed_ = e;
      ++frames_begun_;
      if (error e = handler.on_frame_begin(frame); e != error::none) return failed_ = e;
      in_payload_ = true;
    }
    const std::size_t avail = static_cast<std::size_t>(end - p);
    const std::size_t take = remaining_ < avail ? static_cast<std::size_t>(remaining_) : avail;
    mask_phase_ = unmask(p, take, mask_, mask_phase_);
    remaining_ -= take;
    const bool done = remaining_ == 0;
    if (done) in_payload_ = false;
    if (error e = handler.on_frame_data(std::span<std::uint8_t>(p, take), done); e != error::none) return failed_ = e;
    p += take;
    if (!done) return error::none;  // the rest of this payload comes with a later read
  }
  return error::none;
}

}  // namespace fg::ws
