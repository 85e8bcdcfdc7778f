// Finding the gateway's link sockets: <link-dir>/link-<i>.sock, one per
// gateway I/O thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fg::worker {

struct link_socket {
  std::uint32_t index = 0;
  std::string path;
};

// "link-12.sock" -> 12; anything else (link-.sock, link-1x.sock, a
// leading '+' or zero-padded number) -> nullopt.
std::optional<std::uint32_t> parse_link_socket_name(std::string_view file_name);

// The link sockets present in `dir`, by index; empty when the directory is
// missing (the gateway may not have started yet). Never throws.
std::vector<link_socket> scan_link_dir(const std::string& dir);

// The path of link `index` in `dir`.
std::string link_socket_path(const std::string& dir, std::uint32_t index);

}  // namespace fg::worker
