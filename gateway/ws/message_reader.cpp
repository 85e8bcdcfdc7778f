#include "gateway/ws/message_reader.hpp"

namespace fg::ws {

error message_reader::begin(const frame_header& f, const reader_options&) {
  frame_op_ = f.op;
  frame_started_ = false;
  ++frames_seen_;
  if (f.op == opcode::text || f.op == opcode::binary) {
    message_op_ = f.op;
    utf8_.reset();
  }
  return error::none;
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

void message_reader::release_buffers() noexcept {
  if (message_.capacity() != 0) buffer_pool::this_thread().release(std::move(message_));
  if (control_.capacity() != 0) buffer_pool::this_thread().release(std::move(control_));
}

}  // namespace fg::ws
