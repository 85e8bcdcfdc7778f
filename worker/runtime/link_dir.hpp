// Finding the gateway's link sockets in the link directory (their names
// are the link contract: common/link/link_socket.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/link/link_socket.hpp"

namespace fg::worker {

using fg::link::parse_link_socket_name;

struct link_socket {
  std::uint32_t index = 0;
  std::string path;
};

// The link sockets present in `dir`, by index; empty when the directory is
// missing (the gateway may not have started yet). Never throws.
std::vector<link_socket> scan_link_dir(const std::string& dir);

}  // namespace fg::worker
