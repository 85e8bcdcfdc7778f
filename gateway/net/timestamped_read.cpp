#include "gateway/net/timestamped_read.hpp"

#include <sys/socket.h>
#include <ctime>

#include <cerrno>
#include <cstring>

#include <boost/asio/error.hpp>

namespace fg::gateway {

bool enable_receive_timestamps(int fd) noexcept {
  const int on = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

timestamped_read read_timestamped(int fd, std::span<std::uint8_t> into, boost::system::error_code& ec) noexcept {
  iovec iov{into.data(), into.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    ec.assign(errno, boost::system::system_category());
    return {};
  }
  if (n == 0 && !into.empty()) {
    ec = boost::asio::error::eof;
    return {};
  }
  ec.clear();
  timestamped_read r{static_cast<std::size_t>(n), 0};
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec ts;
    std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
    r.received_ns = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  }
  return r;
}

std::int64_t realtime_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace fg::gateway
