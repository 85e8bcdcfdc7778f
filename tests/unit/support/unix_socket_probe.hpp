// Finds a Unix stream socket of this process by its address, to check
// what a component under test did to a socket it keeps to itself (a
// link's send buffer, say): both ends of an in-process link are here.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace fg::test {

enum class unix_end {
  accepted_at,   // accepted by the listener bound to the path
  connected_to,  // connected to the listener bound to the path
};

// The descriptor of this process's Unix socket at `end` of `path`, if any.
inline std::optional<int> find_unix_socket(std::string_view path, unix_end end) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    int domain = 0;
    socklen_t len = sizeof domain;
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) continue;
    int listening = 0;
    len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening != 0) continue;
    sockaddr_un addr{};
    socklen_t addr_len = sizeof addr;
    const int got = end == unix_end::accepted_at ? ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len)
                                                 : ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len);
    if (got == 0 && addr.sun_family == AF_UNIX && path == addr.sun_path) return fd;
  }
  return std::nullopt;
}

// SO_SNDBUF of `fd` as the kernel reports it (twice what was asked for).
inline int send_buffer_of(int fd) {
  int bytes = 0;
  socklen_t len = sizeof bytes;
  return ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, &len) == 0 ? bytes : -1;
}

}  // namespace fg::test
