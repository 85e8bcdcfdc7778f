// What the tests of the gateway's epoll set and loop watch: one end of a
// Unix socket pair, and a target that records the edges it gets.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "gateway/net/socket_poller.hpp"

namespace fg::gateway::poll_fixtures {

struct socket_pair {
  int ours = -1, theirs = -1;
  socket_pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0) {
      ours = fds[0];
      theirs = fds[1];
    }
  }
  ~socket_pair() {
    if (ours >= 0) ::close(ours);
    if (theirs >= 0) ::close(theirs);
  }
  socket_pair(const socket_pair&) = delete;
  socket_pair& operator=(const socket_pair&) = delete;
  // One byte from the far end; callable from any thread (a plain write(2)).
  void send(const char* s) const { ASSERT_EQ(::write(theirs, s, 1), 1); }
};

struct recorder final : poll_target {
  std::vector<std::uint32_t> events;
  std::function<void(std::uint32_t)> on_edge;
  void on_poll(std::uint32_t e) override {
    events.push_back(e);
    if (on_edge) on_edge(e);
  }
  [[nodiscard]] std::size_t readable() const {
    std::size_t n = 0;
    for (const auto e : events) n += (e & EPOLLIN) != 0;
    return n;
  }
};

}  // namespace fg::gateway::poll_fixtures
