// An IP address (and port) as a balancer writes it for the gateway: in a
// PROXY protocol header, in X-Forwarded-For or in Forwarded. Bytes in
// network order, no socket types: the parsers that use this stay pure.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace fg::http {

struct ip_endpoint {
  enum class family : std::uint8_t { none, ipv4, ipv6 };
  family kind = family::none;            // none: no address named
  std::array<std::uint8_t, 16> bytes{};  // network order; the first 4 for ipv4
  std::uint16_t port = 0;                // 0 where none was named
};

// A dotted-quad (ipv4) or RFC 4291 text (ipv6) address only: no zone
// ("%eth0"), no brackets, no surrounding space. Allocation-free.
bool parse_ip_text(std::string_view text, ip_endpoint::family kind, std::uint8_t* out) noexcept;

// A decimal 0-65535 without leading zeros.
bool parse_port_text(std::string_view text, std::uint16_t& port) noexcept;

}  // namespace fg::http
