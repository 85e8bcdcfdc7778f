// A link's batch, written at once when the socket takes it.
//
// Both ends of a link write one batch per loop turn. Through Asio, even a
// write the socket takes whole costs a completion handler, and the loop an
// extra turn (an epoll_wait) to run it: at 50k messages/s a batch holds a
// message or two, so that turn cost as much as the hop. A link tries the
// socket first; only what it did not take waits for room (the worker hands
// it to Asio, the gateway waits for the socket's writable edge).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace fg::link {

// Sends what the non-blocking stream socket `fd` takes of `bytes` now.
// Returns how many bytes it took: 0 when it is full and also on an error,
// which the caller's wait for room meets again (an asynchronous write's
// handler, or the socket's EPOLLERR/EPOLLHUP edge) and reports outside the
// caller's turn. Never raises SIGPIPE.
inline std::size_t write_now(int fd, std::span<const std::uint8_t> bytes) noexcept {
  const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

}  // namespace fg::link
