#include "worker/broker/redis_client_identity.hpp"

#include <charconv>

namespace fg::worker {

std::optional<redis_client_identity> parse_client_info(std::string_view line) {
  std::optional<std::uint64_t> id;
  std::optional<std::string_view> addr;
  while (!line.empty()) {
    const std::size_t end = line.find_first_of(" \r\n");
    const std::string_view field = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view{} : line.substr(end + 1);
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    if (name == "id") {
      std::uint64_t v = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc{} || p != value.data() + value.size() || value.empty()) return std::nullopt;
      id = v;
    } else if (name == "addr") {
      if (value.empty()) return std::nullopt;
      addr = value;
    }
  }
  if (!id || !addr) return std::nullopt;
  return redis_client_identity{*id, std::string(*addr)};
}

}  // namespace fg::worker
