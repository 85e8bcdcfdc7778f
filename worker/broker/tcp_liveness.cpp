#include "worker/broker/tcp_liveness.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace fg::worker {

keepalive_schedule keepalive_schedule_for(std::chrono::milliseconds timeout) noexcept {
  const auto seconds = std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
  keepalive_schedule s;
  // Probing starts halfway, so that two or three probes go out before the
  // timeout ends the connection (one lost probe is not a dead peer).
  s.idle_s = static_cast<int>(std::max<long long>(1, seconds / 2));
  s.interval_s = static_cast<int>(std::max<long long>(1, seconds / 4));
  s.probes = static_cast<int>(std::max<long long>(1, (seconds - s.idle_s + s.interval_s - 1) / s.interval_s));
  return s;
}

std::string apply_tcp_liveness(int fd, std::chrono::milliseconds timeout) {
  const keepalive_schedule s = keepalive_schedule_for(timeout);
  struct option {
    int level, name, value;
    const char* what;
  };
  const option options[] = {
      {SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE"},
      {IPPROTO_TCP, TCP_KEEPIDLE, s.idle_s, "TCP_KEEPIDLE"},
      {IPPROTO_TCP, TCP_KEEPINTVL, s.interval_s, "TCP_KEEPINTVL"},
      {IPPROTO_TCP, TCP_KEEPCNT, s.probes, "TCP_KEEPCNT"},
      {IPPROTO_TCP, TCP_USER_TIMEOUT, static_cast<int>(std::clamp<long long>(timeout.count(), 1, 0x7fffffff)),
       "TCP_USER_TIMEOUT"},
  };
  for (const option& o : options)
    if (::setsockopt(fd, o.level, o.name, &o.value, sizeof o.value) != 0)
      return std::string(o.what) + ": " + std::strerror(errno);
  return {};
}

}  // namespace fg::worker
