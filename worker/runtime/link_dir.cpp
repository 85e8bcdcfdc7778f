#include "worker/runtime/link_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <system_error>

namespace fg::worker {

std::optional<std::uint32_t> parse_link_socket_name(std::string_view name) {
  constexpr std::string_view prefix = "link-";
  constexpr std::string_view suffix = ".sock";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return std::nullopt;
  const auto digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  std::uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  }
  return static_cast<std::uint32_t>(value);
}

std::vector<link_socket> scan_link_dir(const std::string& dir) {
  std::vector<link_socket> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto index = parse_link_socket_name(it->path().filename().native());
    if (!index) continue;
    std::error_code type_ec;
    if (!it->is_socket(type_ec)) continue;
    found.push_back({*index, it->path().native()});
  }
  std::sort(found.begin(), found.end(), [](const link_socket& a, const link_socket& b) { return a.index < b.index; });
  return found;
}

std::string link_socket_path(const std::string& dir, std::uint32_t index) {
  return (std::filesystem::path(dir) / ("link-" + std::to_string(index) + ".sock")).native();
}

}  // namespace fg::worker
