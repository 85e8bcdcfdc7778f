// The PROXY protocol header a load balancer puts before a client's bytes
// (HAProxy's "PROXY protocol" specification, versions 1 and 2): who the
// client is, when the gateway only sees the balancer's address. nginx's
// `proxy_protocol on`, HAProxy's `send-proxy[-v2]`, AWS NLB and most cloud
// balancers send it.
//
// Pure and allocation-free: it takes the bytes read so far and answers
// "need more", the header's length and the source it names, or a named
// error. It never reads past the header: the bytes after it are the
// client's own (its HTTP request).
//
// Version 1 (text, at most 107 bytes):
//   "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"
//   "PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n"
//   "PROXY UNKNOWN[ anything]\r\n"                    (no source: the balancer's own)
// Version 2 (binary):
//   12-byte signature \r\n\r\n\0\r\nQUIT\n | ver_cmd (0x20 LOCAL, 0x21 PROXY)
//   | family/transport | length (16 bits, network order) | addresses | TLVs
//   AF_INET:  src(4) dst(4) sport(2) dport(2);  AF_INET6: src(16) dst(16) sport(2) dport(2)
//   LOCAL (a balancer's own health check), AF_UNSPEC and AF_UNIX carry no
//   client address; TLVs are skipped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gateway/http/ip_text.hpp"

namespace fg::http {

enum class proxy_error : std::uint8_t {
  none,
  not_proxy,       // neither signature: the peer sent something else first
  v1_too_long,     // no CRLF within 107 bytes (spec: "at most 107 bytes")
  v1_malformed,    // not "PROXY TCP4|TCP6 src dst sport dport\r\n" with single spaces
  v1_bad_address,  // an address that is not of the announced family
  v1_bad_port,     // a port that is not a decimal 0-65535 without leading zeros
  v2_bad_version,  // version nibble other than 2
  v2_bad_command,  // command other than LOCAL (0) or PROXY (1)
  v2_bad_family,   // address family or transport outside the specification
  v2_too_short,    // a length below what the family's addresses need
  v2_too_long,     // above max_proxy_header_bytes: refused before waiting for it
};

// One line, for logs and tests.
std::string_view describe(proxy_error e) noexcept;

// A header (TLVs included) above this is refused: no balancer sends one
// near it, and the bytes wait in the handshake's buffer meanwhile.
inline constexpr std::size_t max_proxy_header_bytes = 2048;
inline constexpr std::size_t max_proxy_v1_bytes = 107;

// family::none: LOCAL, UNKNOWN, AF_UNSPEC or AF_UNIX.
using proxy_source = ip_endpoint;

struct proxy_parse {
  enum class status : std::uint8_t { need_more, done, failed };
  status what = status::need_more;
  std::size_t length = 0;  // done: the header's bytes, to drop before the HTTP request
  proxy_source source;     // done: the client, or family::none
  proxy_error error = proxy_error::none;
};

// `bytes` is everything the connection sent so far. need_more until the
// header is whole (and only while what came so far can still start one).
proxy_parse parse_proxy_header(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace fg::http
