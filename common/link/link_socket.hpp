// The link sockets' names: the gateway listens on <link-dir>/link-<i>.sock,
// one per I/O thread, and a worker links to every such socket it finds.
// Both processes build and read the name here, so they cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fg::link {

// 12 -> "link-12.sock"
std::string link_socket_name(std::uint32_t index);

// The path of link `index` in `dir`.
std::string link_socket_path(const std::string& dir, std::uint32_t index);

// "link-12.sock" -> 12; anything else (link-.sock, link-1x.sock, a
// leading '+' or zero-padded number, over 32 bits) -> nullopt: exactly the
// names link_socket_name makes.
std::optional<std::uint32_t> parse_link_socket_name(std::string_view file_name);

// Removes every entry of `dir` named like a link socket: a socket file
// outlives the process that listened on it, and binding to its path would
// fail. Returns how many were removed; never throws (a missing directory
// has none).
std::size_t remove_link_sockets(const std::string& dir);

}  // namespace fg::link
