// "HOST:PORT" strings as the command line takes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fg {

struct host_port {
  std::string host;
  std::uint16_t port = 0;
};

// Parses "HOST:PORT", "[v6]:PORT" or ":PORT" (all interfaces). Throws
// std::invalid_argument with a one-line message on anything else.
host_port parse_host_port(std::string_view text);

// An admin listener's address: "off" (none) or HOST:PORT. Throws
// std::invalid_argument naming `option` on anything else.
std::optional<host_port> parse_optional_host_port(std::string_view text, std::string_view option);

}  // namespace fg
