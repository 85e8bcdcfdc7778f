// Turns frames into messages: reassembly, UTF-8 checks and control frames.
//
// Pure like the frame parser (no I/O). A message that arrives whole in one
// read is handed on in place, without a copy; one that spans frames or
// reads is gathered in a single buffer borrowed from the pools the caller
// passes (the thread's, in the gateway) and returned as soon as the message
// is delivered, so an idle connection holds no buffer. Text is validated as
// it arrives, across fragments and reads, and fails at the first impossible
// byte.
//
// With permessage-deflate negotiated (RFC 7692), a message whose first
// frame has RSV1 set is inflated as its frames arrive, into the same pooled
// buffer, with the inflated size checked against the limit as it grows and
// the inflated text validated; uncompressed messages take the same zero-copy
// path as without the extension. Without client context takeover the
// inflater is borrowed from the caller's pools for one message only.
//
// MessageHandler contract:
//   void on_message(opcode op, std::span<std::uint8_t> payload);  // text or binary
//   void on_ping(std::span<std::uint8_t> payload);
//   void on_pong(std::span<std::uint8_t> payload);
//   void on_close(std::uint16_t code, std::string_view reason);  // code 1005 when absent
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/buffer_pool.hpp"
#include "common/utf8.hpp"
#include "gateway/ws/deflate_options.hpp"
#include "gateway/ws/frame_parser.hpp"

namespace fg::ws {

class inflater;
class inflater_pool;

struct reader_options {
  parser_limits limits{};
  bool validate_utf8 = true;
};

// Where a reader borrows from: message buffers, and inflaters for
// compressed messages without client context takeover. The gateway passes
// its I/O thread's pools; pass the same ones to every call on one reader.
struct reader_pools {
  buffer_pool& buffers;
  inflater_pool& inflaters;
};

class message_reader {
 public:
  message_reader();
  message_reader(const message_reader&) = delete;
  message_reader& operator=(const message_reader&) = delete;
  ~message_reader();

  // The connection negotiated permessage-deflate (before the first feed).
  void enable_deflate(const deflate_params& p) noexcept;

  // Feeds bytes just read; returns the first protocol error, if any.
  // Buffers and inflaters are borrowed from `pools` and given back to them.
  template <class MessageHandler>
  error feed(std::span<std::uint8_t> in, const reader_options& opt, reader_pools pools, MessageHandler& h) {
    adapter<MessageHandler> a{*this, opt, pools, h};
    if (!deflate_) return parser_.feed(in, opt.limits, a);
    parser_limits lim = opt.limits;
    lim.allow_rsv1 = true;  // RFC 7692 §6: RSV1 marks a compressed message
    lim.max_compressed_size = compressed_wire_limit(lim.max_message_size);
    return parser_.feed(in, lim, a);
  }

  // How many bytes a compressed message may take on the wire: a little more
  // than the limit on its inflated size (see .cpp).
  static std::uint64_t compressed_wire_limit(std::uint64_t max_message_size) noexcept;

  // During on_message: whether the message came compressed, and its
  // payload size on the wire.
  [[nodiscard]] bool compressed() const noexcept { return compressed_; }
  [[nodiscard]] std::uint64_t wire_size() const noexcept { return parser_.message_size(); }

  // True while no partial message or frame is held (nothing borrowed).
  [[nodiscard]] bool idle() const noexcept { return !parser_.mid_frame() && !parser_.in_message(); }

  // Frames begun so far, modulo 2^32 (for the frames-per-read histogram).
  [[nodiscard]] std::uint32_t frames_seen() const noexcept { return parser_.frames_begun(); }

  // Gives borrowed buffers and inflater back to the pools (connection
  // teardown); a reader destroyed without this frees them instead.
  void release_buffers(reader_pools pools) noexcept;

 private:
  template <class MessageHandler>
  struct adapter {
    message_reader& r;
    const reader_options& opt;
    reader_pools pools;
    MessageHandler& h;

    error on_frame_begin(const frame_header& f) { return r.begin(f, opt); }
    error on_frame_data(std::span<std::uint8_t> chunk, bool frame_done) {
      return r.data(chunk, frame_done, opt, pools, h);
    }
  };

  error begin(const frame_header& f, const reader_options& opt);

  template <class MessageHandler>
  error data(std::span<std::uint8_t> chunk, bool frame_done, const reader_options& opt, reader_pools pools,
             MessageHandler& h);

  template <class MessageHandler>
  error deliver_control(std::span<std::uint8_t> payload, MessageHandler& h);

  static error parse_close(std::span<const std::uint8_t> payload, std::uint16_t& code, std::string_view& reason);

  // Drops a control frame gathered across reads from buffer_, and gives the
  // buffer back if it was borrowed for that frame alone.
  void end_control(reader_pools pools) noexcept;

  // A piece of a compressed message, inflated into buffer_.
  error inflate_piece(std::span<const std::uint8_t> chunk, bool message_done, const reader_options& opt,
                      reader_pools pools);
  void end_compressed_message(reader_pools pools) noexcept;

  frame_parser parser_;
  // Borrowed while a message spans frames or reads, or a control frame
  // spans reads: one handle for both, as a control frame may interrupt a
  // fragmented message but never the other way round. The last
  // control_size_ bytes are the control frame's, the rest the message's.
  byte_buffer buffer_;
  utf8_validator utf8_;
  opcode message_op_ = opcode::text;
  opcode frame_op_ = opcode::text;
  bool frame_started_ = false;  // this frame has already delivered part of its payload
  bool deflate_ = false;        // permessage-deflate negotiated
  bool client_takeover_ = false;
  std::uint8_t client_window_bits_ = 15;
  bool compressed_ = false;             // the open message came with RSV1
  std::uint8_t control_size_ = 0;       // bytes of a control frame gathered at the end of buffer_
  bool control_borrowed_ = false;       // buffer_ was borrowed for that control frame alone
  std::unique_ptr<inflater> inflater_;  // while a compressed message is read; for good with client takeover
};

template <class MessageHandler>
error message_reader::data(std::span<std::uint8_t> chunk, bool frame_done, const reader_options& opt,
                           reader_pools pools, MessageHandler& h) {
  const bool first_piece = !frame_started_;
  frame_started_ = !frame_done;

  if (is_control(frame_op_)) {
    if (first_piece && frame_done) return deliver_control(chunk, h);  // whole frame in this read
    // Gathered behind the message it interrupts, if one is being gathered.
    if (first_piece) {
      control_borrowed_ = buffer_.capacity() == 0;
      if (control_borrowed_) buffer_ = pools.buffers.acquire();
    }
    buffer_.append(chunk);
    control_size_ = static_cast<std::uint8_t>(control_size_ + chunk.size());  // at most 125 (the parser's rule)
    if (!frame_done) return error::none;
    error e = deliver_control(buffer_.span().last(control_size_), h);
    end_control(pools);
    return e;
  }

  const bool message_done = frame_done && !parser_.in_message();
  if (compressed_) {
    if (error e = inflate_piece(chunk, message_done, opt, pools); e != error::none) return e;
    if (message_done) {
      h.on_message(message_op_, buffer_.span());
      end_compressed_message(pools);
    }
    return error::none;
  }
  if (message_op_ == opcode::text && opt.validate_utf8) {
    if (!utf8_.feed(chunk.data(), chunk.size())) return error::invalid_utf8;
  }
  const bool single_piece = message_done && first_piece && buffer_.capacity() == 0;
  if (message_done && message_op_ == opcode::text && opt.validate_utf8 && !utf8_.complete())
    return error::invalid_utf8;  // a sequence left open at the end of the message

  if (single_piece) {
    h.on_message(message_op_, chunk);  // zero copy: straight from the read buffer
    return error::none;
  }
  if (buffer_.capacity() == 0) buffer_ = pools.buffers.acquire();
  buffer_.append(chunk);
  if (message_done) {
    h.on_message(message_op_, buffer_.span());
    pools.buffers.release(std::move(buffer_));
  }
  return error::none;
}

template <class MessageHandler>
error message_reader::deliver_control(std::span<std::uint8_t> payload, MessageHandler& h) {
  switch (frame_op_) {
    case opcode::ping: h.on_ping(payload); break;
    case opcode::pong: h.on_pong(payload); break;
    default: {
      std::uint16_t code = 0;
      std::string_view reason;
      if (error e = parse_close(payload, code, reason); e != error::none) return e;
      h.on_close(code, reason);
    }
  }
  return error::none;
}

}  // namespace fg::ws
