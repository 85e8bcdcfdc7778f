#include "gateway/ws/protocol.hpp"

namespace fg::ws {

std::string_view to_string(error e) noexcept {
  switch (e) {
    case error::none: return "none";
    case error::reserved_bits: return "reserved_bits";
    case error::reserved_opcode: return "reserved_opcode";
    case error::unmasked_frame: return "unmasked_frame";
    case error::control_frame_too_long: return "control_frame_too_long";
    case error::control_frame_fragmented: return "control_frame_fragmented";
    case error::continuation_without_start: return "continuation_without_start";
    case error::data_frame_in_fragmented: return "data_frame_in_fragmented";
    case error::invalid_length: return "invalid_length";
    case error::message_too_big: return "message_too_big";
    case error::too_many_fragments: return "too_many_fragments";
    case error::invalid_utf8: return "invalid_utf8";
    case error::invalid_close_payload: return "invalid_close_payload";
    case error::invalid_close_code: return "invalid_close_code";
    case error::invalid_close_reason: return "invalid_close_reason";
    case error::compressed_control_frame: return "compressed_control_frame";
    case error::compressed_continuation: return "compressed_continuation";
    case error::invalid_deflate_data: return "invalid_deflate_data";
  }
  return "unknown";
}

}  // namespace fg::ws
