// How long a TCP connection to Redis may stay silent before it is given up.
//
// A Redis behind a dead network sends no FIN and no RST. Without more than
// hiredis's keepalive, an idle connection (a subscribe connection between
// messages) is found dead after about 30 s, and one with a command on the
// wire (a publish, a SUBSCRIBE) only when TCP stops retransmitting, about
// 15 minutes on Linux's defaults: the worker meanwhile counts the
// connection as up, buffers nothing and delivers nothing. With a timeout
// T, the kernel closes the connection when sent bytes stay unacknowledged
// (or unsent behind a zero window) for T, or when keepalive probes find no
// peer T after the last thing heard (TCP_USER_TIMEOUT, which then also
// decides keepalive's end). A busy Redis is not mistaken for a dead one:
// its kernel acknowledges and answers probes whatever the process does.
#pragma once

#include <chrono>
#include <string>

namespace fg::worker {

// The keepalive schedule for a timeout: first probe after `idle` of
// silence, then one every `interval`; the connection is closed at the
// first probe due when nothing was heard for the timeout. Whole seconds,
// at least one each (what the socket options take).
struct keepalive_schedule {
  int idle_s = 0;
  int interval_s = 0;
  // Probes due before the timeout: what ends the connection where the
  // kernel knows no TCP_USER_TIMEOUT.
  int probes = 0;
};
[[nodiscard]] keepalive_schedule keepalive_schedule_for(std::chrono::milliseconds timeout) noexcept;

// Sets SO_KEEPALIVE, its schedule and TCP_USER_TIMEOUT on a connected TCP
// socket. Returns an empty string, or what the kernel refused.
[[nodiscard]] std::string apply_tcp_liveness(int fd, std::chrono::milliseconds timeout);

}  // namespace fg::worker
