// One read from a client socket that also says when the kernel received
// the newest bytes it returned (SO_TIMESTAMPNS). The gap between that and
// the read is time the data waited for the gateway: the scheduler running
// something else, and the loop busy with other sockets. It is what the
// gateway's own per-turn timing cannot see, and what open-loop tail latency
// is made of on a busy host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <boost/system/error_code.hpp>

namespace fg::gateway {

struct timestamped_read {
  std::size_t bytes = 0;
  // CLOCK_REALTIME nanoseconds of the newest segment read; 0: the kernel
  // gave none (timestamps off for this socket, or a packet that arrived
  // before the kernel's deferred switch to stamping took effect, just
  // after the first socket of the host asked: such reads are not counted).
  std::int64_t received_ns = 0;
};

// Asks the kernel to stamp what `fd` receives; false if it refused.
bool enable_receive_timestamps(int fd) noexcept;

// One non-blocking recvmsg() into `into`. Errors as Asio's read_some
// reports them: would_block when nothing is there, eof when the peer shut
// its side, the errno otherwise.
timestamped_read read_timestamped(int fd, std::span<std::uint8_t> into, boost::system::error_code& ec) noexcept;

// CLOCK_REALTIME now, in nanoseconds: the clock receive timestamps use.
std::int64_t realtime_ns() noexcept;

}  // namespace fg::gateway
