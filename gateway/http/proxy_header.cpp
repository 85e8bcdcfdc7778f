#include "gateway/http/proxy_header.hpp"

#include <algorithm>
#include <cstring>

namespace fg::http {

std::string_view describe(proxy_error e) noexcept {
  switch (e) {
    case proxy_error::none: return "no error";
    case proxy_error::not_proxy: return "no PROXY protocol header";
    case proxy_error::v1_too_long: return "PROXY v1 line longer than 107 bytes";
    case proxy_error::v1_malformed: return "malformed PROXY v1 line";
    case proxy_error::v1_bad_address: return "PROXY v1 address not of its family";
    case proxy_error::v1_bad_port: return "PROXY v1 port out of range";
    case proxy_error::v2_bad_version: return "PROXY v2 version is not 2";
    case proxy_error::v2_bad_command: return "PROXY v2 command is neither LOCAL nor PROXY";
    case proxy_error::v2_bad_family: return "PROXY v2 address family or transport unknown";
    case proxy_error::v2_too_short: return "PROXY v2 length too short for its addresses";
    case proxy_error::v2_too_long: return "PROXY v2 header too long";
  }
  return "unknown PROXY header error";
}

namespace {

constexpr std::string_view v1_signature = "PROXY ";
constexpr std::array<std::uint8_t, 12> v2_signature{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                    0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
constexpr std::size_t v2_fixed_bytes = 16;

proxy_parse failed(proxy_error e) noexcept { return {proxy_parse::status::failed, 0, {}, e}; }
proxy_parse done(std::size_t length, const proxy_source& source) noexcept {
  return {proxy_parse::status::done, length, source, proxy_error::none};
}

// Whether `bytes` starts as `signature` does, as far as both go.
bool starts_like(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> signature) noexcept {
  const std::size_t n = std::min(bytes.size(), signature.size());
  return std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n), signature.begin());
}

// Splits off the field up to the next single space; false if there is none.
bool next_field(std::string_view& rest, std::string_view& field) noexcept {
  const auto space = rest.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  field = rest.substr(0, space);
  rest.remove_prefix(space + 1);
  return true;
}

proxy_parse parse_v1(std::span<const std::uint8_t> bytes) noexcept {
  const std::size_t window = std::min(bytes.size(), max_proxy_v1_bytes);
  const auto* begin = reinterpret_cast<const char*>(bytes.data());
  const std::string_view seen(begin, window);
  const auto lf = seen.find('\n');
  if (lf == std::string_view::npos)
    return bytes.size() >= max_proxy_v1_bytes ? failed(proxy_error::v1_too_long) : proxy_parse{};
  if (lf == 0 || seen[lf - 1] != '\r') return failed(proxy_error::v1_malformed);
  const std::size_t length = lf + 1;
  std::string_view rest = seen.substr(v1_signature.size(), lf - 1 - v1_signature.size());

  proxy_source source;
  if (rest == "UNKNOWN" || rest.starts_with("UNKNOWN ")) return done(length, source);  // the balancer's own
  std::string_view proto, src, dst, sport;
  if (!next_field(rest, proto) || !next_field(rest, src) || !next_field(rest, dst) || !next_field(rest, sport))
    return failed(proxy_error::v1_malformed);
  const std::string_view dport = rest;  // the last field: up to the CR
  if (dport.find(' ') != std::string_view::npos) return failed(proxy_error::v1_malformed);
  if (proto == "TCP4")
    source.kind = proxy_source::family::ipv4;
  else if (proto == "TCP6")
    source.kind = proxy_source::family::ipv6;
  else
    return failed(proxy_error::v1_malformed);
  std::array<std::uint8_t, 16> ignored{};
  if (!parse_ip_text(src, source.kind, source.bytes.data()) || !parse_ip_text(dst, source.kind, ignored.data()))
    return failed(proxy_error::v1_bad_address);
  std::uint16_t ignored_port = 0;
  if (!parse_port_text(sport, source.port) || !parse_port_text(dport, ignored_port))
    return failed(proxy_error::v1_bad_port);
  return done(length, source);
}

proxy_parse parse_v2(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() < v2_fixed_bytes) return {};
  const std::uint8_t ver_cmd = bytes[12];
  const std::uint8_t fam = bytes[13];
  const std::size_t length = v2_fixed_bytes + (std::size_t{bytes[14]} << 8 | bytes[15]);
  if ((ver_cmd >> 4) != 2) return failed(proxy_error::v2_bad_version);
  const unsigned command = ver_cmd & 0x0F;
  if (command > 1) return failed(proxy_error::v2_bad_command);
  if (length > max_proxy_header_bytes) return failed(proxy_error::v2_too_long);
  proxy_source source;
  // LOCAL: the balancer speaking for itself (a health check). The spec has
  // the receiver accept it and ignore its family and addresses.
  if (command == 0) return bytes.size() < length ? proxy_parse{} : done(length, source);
  // The defined pairs: UNSPEC, then TCP and UDP over INET and INET6, stream
  // and datagram over UNIX; the spec has every other value refused.
  const unsigned family = fam >> 4;
  const unsigned transport = fam & 0x0F;
  if (fam != 0x00 && (family < 1 || family > 3 || transport < 1 || transport > 2))
    return failed(proxy_error::v2_bad_family);
  // The addresses each family carries: INET 4+4+2+2, INET6 16+16+2+2, UNIX 108+108.
  static constexpr std::size_t address_bytes[4] = {0, 12, 36, 216};
  if (length - v2_fixed_bytes < address_bytes[family]) return failed(proxy_error::v2_too_short);
  if (bytes.size() < length) return {};
  // UNSPEC and UNIX name no client address. Stream or datagram alike: the
  // connection is the one that carries the header.
  if (family == 0 || family == 3) return done(length, source);
  const std::uint8_t* a = bytes.data() + v2_fixed_bytes;
  const std::size_t size = family == 1 ? 4 : 16;
  source.kind = family == 1 ? proxy_source::family::ipv4 : proxy_source::family::ipv6;
  std::memcpy(source.bytes.data(), a, size);
  const std::uint8_t* ports = a + 2 * size;
  source.port = static_cast<std::uint16_t>(ports[0] << 8 | ports[1]);
  return done(length, source);
}

}  // namespace

proxy_parse parse_proxy_header(std::span<const std::uint8_t> bytes) noexcept {
  const std::span<const std::uint8_t> v1(reinterpret_cast<const std::uint8_t*>(v1_signature.data()),
                                         v1_signature.size());
  if (bytes.empty()) return {};
  if (starts_like(bytes, v1)) return bytes.size() < v1.size() ? proxy_parse{} : parse_v1(bytes);
  if (starts_like(bytes, v2_signature)) return bytes.size() < v2_signature.size() ? proxy_parse{} : parse_v2(bytes);
  return failed(proxy_error::not_proxy);
}

}  // namespace fg::http
