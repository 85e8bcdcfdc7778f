// What one non-blocking write to a client socket did, and the one place
// that turns a send()'s answer into it.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>

namespace fg::gateway {

struct write_result {
  enum class status : std::uint8_t { written, would_block, failed };
  status what = status::written;
  std::size_t bytes = 0;  // taken by the socket (status written)
};

// A send's return value: bytes taken, or minus the errno (io_uring's form;
// send_now() converts to it).
inline write_result to_write_result(long sent_or_minus_errno) noexcept {
  if (sent_or_minus_errno >= 0) return {write_result::status::written, static_cast<std::size_t>(sent_or_minus_errno)};
  const long err = -sent_or_minus_errno;
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return {write_result::status::would_block, 0};
  return {write_result::status::failed, 0};
}

// One non-blocking send of `bytes` to the stream socket `fd`; never raises SIGPIPE.
inline write_result send_now(int fd, std::span<const std::uint8_t> bytes) noexcept {
  const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return to_write_result(sent >= 0 ? static_cast<long>(sent) : -static_cast<long>(errno));
}

}  // namespace fg::gateway
