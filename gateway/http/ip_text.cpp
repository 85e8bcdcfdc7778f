#include "gateway/http/ip_text.hpp"

#include <algorithm>
#include <cstring>

#include <arpa/inet.h>

namespace fg::http {

bool parse_ip_text(std::string_view text, ip_endpoint::family kind, std::uint8_t* out) noexcept {
  char z[INET6_ADDRSTRLEN];  // inet_pton wants a terminated string, and stops at a NUL of ours
  if (kind == ip_endpoint::family::none || text.empty() || text.size() >= sizeof z) return false;
  const auto address_char = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':';
  };
  if (!std::all_of(text.begin(), text.end(), address_char)) return false;
  std::memcpy(z, text.data(), text.size());
  z[text.size()] = '\0';
  return ::inet_pton(kind == ip_endpoint::family::ipv4 ? AF_INET : AF_INET6, z, out) == 1;
}

bool parse_port_text(std::string_view text, std::uint16_t& port) noexcept {
  if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return false;
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

}  // namespace fg::http
