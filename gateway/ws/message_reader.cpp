#include "gateway/ws/message_reader.hpp"

#include <algorithm>
#include <limits>

#include "gateway/ws/inflater.hpp"

namespace fg::ws {

message_reader::message_reader() = default;

// Out of line for unique_ptr<inflater>. What was not given back with
// release_buffers() is freed with the reader: it knows no pool of its own.
message_reader::~message_reader() = default;

// RFC 7692 §7.2.1: compressing incompressible data makes it larger: by
// 0.03% with zlib's defaults, 4% at memLevel 1 or with a window smaller than
// zlib's block buffer (no stored blocks then), 5.5% with fixed Huffman codes
// only. The limit is about the inflated size, checked as it is produced, and
// compressed bytes are not kept, so a compressed message may take 1/16 more
// on the wire: a client compressing a random message of the largest allowed
// size is not refused for it.
std::uint64_t message_reader::compressed_wire_limit(std::uint64_t max_message_size) noexcept {
  const std::uint64_t slack = max_message_size / 16 + 64;
  constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  return max_message_size > top - slack ? top : max_message_size + slack;
}

void message_reader::enable_deflate(const deflate_params& p) noexcept {
  deflate_ = p.enabled;
  client_takeover_ = p.client_takeover;
  client_window_bits_ = p.client_window_bits;
}

error message_reader::begin(const frame_header& f, const reader_options&) {
  frame_op_ = f.op;
  frame_started_ = false;
  if (f.op == opcode::text || f.op == opcode::binary) {
    message_op_ = f.op;
    compressed_ = deflate_ && f.rsv1;  // RFC 7692 §6: RSV1 on the first frame marks a compressed message
    utf8_.reset();
  }
  return error::none;
}

error message_reader::inflate_piece(std::span<const std::uint8_t> chunk, bool message_done, const reader_options& opt,
                                    reader_pools pools) {
  if (!inflater_)
    inflater_ = client_takeover_ ? std::make_unique<inflater>(client_window_bits_) : pools.inflaters.acquire();
  if (buffer_.capacity() == 0) buffer_ = pools.buffers.acquire();
  const std::size_t before = buffer_.size();
  // The inflated size counts against the limit as it is produced (a zip bomb ends here).
  const std::uint64_t limit = opt.limits.max_message_size;
  error e = inflater_->inflate(chunk, buffer_, limit);
  if (e == error::none && message_done) e = inflater_->finish_message(buffer_, limit);
  const bool text = message_op_ == opcode::text && opt.validate_utf8;
  // What was produced is checked before the stream's own verdict, so a
  // message fails the same way wherever its bytes were cut into reads.
  if (text && !utf8_.feed(buffer_.data() + before, buffer_.size() - before)) return error::invalid_utf8;
  if (e != error::none) return e;
  if (text && message_done && !utf8_.complete()) return error::invalid_utf8;
  return error::none;
}

void message_reader::end_control(reader_pools pools) noexcept {
  // The handler may have ended the connection (release_buffers) meanwhile.
  buffer_.truncate(buffer_.size() - std::min<std::size_t>(control_size_, buffer_.size()));
  control_size_ = 0;
  if (control_borrowed_) pools.buffers.release(std::move(buffer_));
  control_borrowed_ = false;
}

void message_reader::end_compressed_message(reader_pools pools) noexcept {
  pools.buffers.release(std::move(buffer_));
  if (!client_takeover_) pools.inflaters.release(std::move(inflater_));
}

error message_reader::parse_close(std::span<const std::uint8_t> payload, std::uint16_t& code,
                                  std::string_view& reason) {
  if (payload.empty()) {
    code = close_code::no_status;
    return error::none;
  }
  if (payload.size() == 1) return error::invalid_close_payload;
  code = static_cast<std::uint16_t>((payload[0] << 8) | payload[1]);
  if (!is_valid_close_code(code)) return error::invalid_close_code;
  const auto text = payload.subspan(2);
  if (!is_valid_utf8(text)) return error::invalid_close_reason;
  reason = std::string_view(reinterpret_cast<const char*>(text.data()), text.size());
  return error::none;
}

void message_reader::release_buffers(reader_pools pools) noexcept {
  if (buffer_.capacity() != 0) pools.buffers.release(std::move(buffer_));
  control_size_ = 0;
  control_borrowed_ = false;
  // A pooled inflater goes back reset; a connection's own one is freed.
  if (inflater_ && !client_takeover_) pools.inflaters.release(std::move(inflater_));
  inflater_.reset();
}

}  // namespace fg::ws
