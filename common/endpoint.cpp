#include "common/endpoint.hpp"

#include <charconv>
#include <stdexcept>

namespace fg {

host_port parse_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument("expected HOST:PORT, got '" + std::string(text) + "'");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    throw std::invalid_argument("invalid port in '" + std::string(text) + "'");
  return host_port{host.empty() ? std::string("0.0.0.0") : std::string(host), static_cast<std::uint16_t>(port)};
}

std::optional<host_port> parse_optional_host_port(std::string_view text, std::string_view option) {
  if (text == "off") return std::nullopt;
  try {
    return parse_host_port(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(option) + ": " + e.what());
  }
}

}  // namespace fg
