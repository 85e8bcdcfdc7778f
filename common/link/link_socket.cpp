#include "common/link/link_socket.hpp"

#include <sys/socket.h>

#include <filesystem>
#include <limits>
#include <system_error>
#include <vector>

#include <spdlog/spdlog.h>

namespace fg::link {

namespace {
constexpr std::string_view prefix = "link-";
constexpr std::string_view suffix = ".sock";
}  // namespace

std::string link_socket_name(std::uint32_t index) {
  std::string name(prefix);
  name += std::to_string(index);
  name += suffix;
  return name;
}

std::string link_socket_path(const std::string& dir, std::uint32_t index) {
  return (std::filesystem::path(dir) / link_socket_name(index)).native();
}

std::optional<std::uint32_t> parse_link_socket_name(std::string_view name) {
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

std::size_t remove_link_sockets(const std::string& dir) {
  // Collected first: removing entries while iterating a directory leaves
  // it unspecified whether the iterator still sees the others.
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (parse_link_socket_name(it->path().filename().native())) stale.push_back(it->path());
  std::size_t removed = 0;
  for (const auto& path : stale) removed += std::filesystem::remove(path, ec) ? 1 : 0;
  return removed;
}

int link_send_buffer::apply(int fd) {
  if (bytes_ > 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes_, sizeof bytes_) != 0) return 0;
  int granted = 0;
  socklen_t len = sizeof granted;
  if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &granted, &len) != 0) return 0;
  if (bytes_ > 0 && granted / 2 < bytes_ && !warned_) {
    log_->warn(
        "link send buffer: {} KiB asked for, {} KiB granted (net.core.wmem_max caps it; raise it for the "
        "full size)",
        bytes_ / 1024, granted / 2 / 1024);
    warned_ = true;
  }
  return granted;
}

}  // namespace fg::link
