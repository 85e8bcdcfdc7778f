// The link sockets: the gateway listens on <link-dir>/link-<i>.sock, one
// per I/O thread, and a worker links to every such socket it finds. Both
// processes build and read the names here, so they cannot disagree, and
// size their ends' send buffers alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace spdlog {
class logger;
}

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

// The send buffer both ends ask for on every link socket (--link-sndbuf).
// A link carries a whole loop turn's batch at once: with the kernel's
// default (208 KiB) a busy worker's writes found the socket full and
// waited for room, and both processes paid for the extra wake-ups. 1 MiB
// (2 MiB granted) took the 1 KiB closed loop through a worker from 595k
// to 775k msg/s, 23% less CPU per echo; 4 MiB was no better
// (docs/BENCHMARKS.md, sixth step).
inline constexpr int default_link_sndbuf = 1 << 20;

// The send buffer a link end asks for on each of its sockets (a worker's
// link to one gateway thread, or one thread's acceptor for all its
// workers); 0 leaves the kernel's default. Linux caps a request at
// net.core.wmem_max and then doubles it (its bookkeeping overhead): the
// first time the cap cuts a request, `log` gets one warning that says how
// to lift it.
class link_send_buffer {
 public:
  link_send_buffer(int bytes, std::shared_ptr<spdlog::logger> log) : bytes_(bytes), log_(std::move(log)) {}

  // Asks for the buffer on `fd`; returns the size granted (as SO_SNDBUF
  // reads back), or 0 when the socket refused.
  int apply(int fd);

 private:
  int bytes_;
  std::shared_ptr<spdlog::logger> log_;
  bool warned_ = false;
};

}  // namespace fg::link
