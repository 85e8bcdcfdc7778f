// Who a client is, as an HTTP balancer says in a request header: the
// de facto X-Forwarded-For ("client, proxy1, proxy2", each hop appending
// the address it received the request from), X-Real-IP (one address), or
// RFC 7239's Forwarded ("for=client;proto=https, for=\"[2001:db8::1]:80\"").
//
// Pure and allocation-free: it reads the header's lines and keeps the hops
// they name, nearest first. Which hop is the client is a question of trust
// (only the addresses a trusted balancer appended can be believed), which
// the caller answers (gateway/net/forwarded_client.hpp).
//
// Accepted forms of a hop: 192.0.2.1, 192.0.2.1:8080, 2001:db8::1,
// [2001:db8::1], [2001:db8::1]:8080; in Forwarded, the `for` parameter's
// value as a token or a quoted string. Anything else (RFC 7239's
// "unknown" and obfuscated "_names", a hop without `for`, a repeated
// `for`, an unterminated quote, garbage) is a hop whose address is not
// known. Empty list elements are skipped (RFC 9110 §5.6.1), and every
// comma ends an element, so a quote a client leaves open in its own part
// cannot hide the hops the balancers appended after it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/http/ip_text.hpp"

namespace fg::http {

enum class forwarded_syntax : std::uint8_t {
  address_list,  // X-Forwarded-For, X-Real-IP, and any other header of addresses
  rfc7239,       // Forwarded
};

// `forwarded` (any case) is RFC 7239's; any other header lists addresses.
forwarded_syntax syntax_of_header(std::string_view name) noexcept;

class forwarded_hops {
 public:
  // The nearest hops kept: no deployment chains more trusted proxies, and
  // a client may put any number of its own addresses in front.
  static constexpr std::size_t capacity = 16;

  explicit forwarded_hops(forwarded_syntax syntax) noexcept : syntax_(syntax) {}

  // One line of the header, in the order the lines came: a header sent on
  // several lines is one list (RFC 9110 §5.3).
  void add_line(std::string_view value) noexcept;

  // Hops kept, at most `capacity`; `named()` counts every one the lines held.
  [[nodiscard]] std::size_t size() const noexcept { return named_ < capacity ? named_ : capacity; }
  [[nodiscard]] std::size_t named() const noexcept { return named_; }
  // 0 is the nearest hop, the one the last proxy appended. kind none: the
  // hop is named but its address is not known.
  [[nodiscard]] const ip_endpoint& nearest(std::size_t i) const noexcept { return ring_[(named_ - 1 - i) % capacity]; }

 private:
  void add_hop(const ip_endpoint& hop) noexcept { ring_[named_++ % capacity] = hop; }

  forwarded_syntax syntax_;
  std::array<ip_endpoint, capacity> ring_{};
  std::size_t named_ = 0;
};

// One hop's node ("192.0.2.1:80", "[2001:db8::1]"); kind none when it is
// not an address. Exposed for tests.
ip_endpoint parse_forwarded_node(std::string_view node) noexcept;

}  // namespace fg::http
