// RFC 6455 vocabulary: opcodes, the named protocol errors and the close
// codes they map to. Conformance can be reviewed as the list below.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/close_codes.hpp"

namespace fg::ws {

// RFC 6455 §5.2
enum class opcode : std::uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

constexpr bool is_control(opcode op) noexcept { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

// RFC 6455 §7.4.1 (the list is shared with the worker)
namespace close_code = fg::close_code;

// Every reason to fail a connection, one name each.
enum class error : std::uint8_t {
  none = 0,
  reserved_bits,               // §5.2: RSV1-3 set without a negotiated extension
  reserved_opcode,             // §5.2: opcodes 0x3-0x7 and 0xB-0xF
  unmasked_frame,              // §5.3: client frames MUST be masked
  control_frame_too_long,      // §5.5: control payload > 125 bytes
  control_frame_fragmented,    // §5.5: control frames MUST NOT be fragmented
  continuation_without_start,  // §5.4: continuation with no message open
  data_frame_in_fragmented,    // §5.4: text/binary while a message is open
  invalid_length,              // §5.2: 64-bit length with the high bit set
  message_too_big,             // §10.4: message over the configured limit
  too_many_fragments,          // §10.4: fragment count over the configured limit
  invalid_utf8,                // §8.1: text message not valid UTF-8
  invalid_close_payload,       // §5.5.1: close payload of exactly 1 byte
  invalid_close_code,          // §7.4: code not allowed on the wire
  invalid_close_reason,        // §5.5.1: close reason not valid UTF-8
  compressed_control_frame,    // RFC 7692 §6: RSV1 on a control frame (deflate negotiated)
  compressed_continuation,     // RFC 7692 §6: RSV1 on a frame other than a message's first
  invalid_deflate_data,        // RFC 7692 §6.2: a compressed payload that does not inflate
};

inline constexpr int error_kinds = static_cast<int>(error::invalid_deflate_data) + 1;

// The one table from errors to close codes. No default: -Wswitch names an
// error added to the enum but not to this table.
constexpr std::uint16_t close_code_for(error e) noexcept {
  switch (e) {
    case error::none: return close_code::normal;
    case error::invalid_utf8:
    case error::invalid_close_reason:
    // Data inconsistent with the message's type, like invalid UTF-8 (§7.4.1);
    // Node ws closes with 1007 on broken compressed data too.
    case error::invalid_deflate_data: return close_code::invalid_payload;
    case error::message_too_big:
    case error::too_many_fragments: return close_code::message_too_big;
    case error::reserved_bits:
    case error::reserved_opcode:
    case error::unmasked_frame:
    case error::control_frame_too_long:
    case error::control_frame_fragmented:
    case error::continuation_without_start:
    case error::data_frame_in_fragmented:
    case error::invalid_length:
    case error::invalid_close_payload:
    case error::invalid_close_code:
    case error::compressed_control_frame:
    case error::compressed_continuation: return close_code::protocol_error;
  }
  return close_code::protocol_error;  // only a value outside the enum gets here
}

std::string_view to_string(error e) noexcept;

// §7.4: may this code appear in a close frame received from a peer?
constexpr bool is_valid_close_code(std::uint16_t code) noexcept {
  if (code >= 3000 && code <= 4999) return true;  // registered and private use
  switch (code) {
    case close_code::normal:
    case close_code::going_away:
    case close_code::protocol_error:
    case close_code::unsupported_data:
    case close_code::invalid_payload:
    case close_code::policy_violation:
    case close_code::message_too_big:
    case close_code::mandatory_extension:
    case close_code::internal_error: return true;
    default: return false;  // includes 1004-1006, 1015 (reserved) and 1012-1014 (not for endpoints here)
  }
}

}  // namespace fg::ws
