// RFC 6455 §7.4.1 close codes: the one list. The gateway sends and reads
// them in close frames; both processes carry them across the link
// (ConnectionClosed.code, Close.code) and the worker hands them to apps.
#pragma once

#include <cstdint>

namespace fg::close_code {

constexpr std::uint16_t normal = 1000;
constexpr std::uint16_t going_away = 1001;
constexpr std::uint16_t protocol_error = 1002;
constexpr std::uint16_t unsupported_data = 1003;
constexpr std::uint16_t no_status = 1005;  // never sent on the wire
constexpr std::uint16_t abnormal = 1006;   // never sent on the wire
constexpr std::uint16_t invalid_payload = 1007;
constexpr std::uint16_t policy_violation = 1008;
constexpr std::uint16_t message_too_big = 1009;
constexpr std::uint16_t mandatory_extension = 1010;
constexpr std::uint16_t internal_error = 1011;
constexpr std::uint16_t try_again_later = 1013;  // IANA registry: try again later (no worker can serve it now)

// framegate's own, in the private range (RFC 6455 §7.4.2: 4000-4999).
constexpr std::uint16_t token_expired = 4001;  // the handshake token's exp (plus --jwt-leeway) passed

// The link carries a code in a uint32 field; one that does not fit the
// 16 bits of a close frame cannot be a close code, and reads as abnormal.
constexpr std::uint16_t from_link(std::uint32_t code) noexcept {
  return code <= 0xFFFF ? static_cast<std::uint16_t>(code) : abnormal;
}

}  // namespace fg::close_code
