// The per-thread epoll set of open connections: edges reach their target
// once, a removed descriptor's pending edges are dropped (a target may end
// another during a batch), and a redelivered edge comes back once, after
// the kernel's.
#include "gateway/net/socket_poller.hpp"
#include "tests/unit/gateway/net/poll_fixtures.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <vector>

namespace fg::gateway {
namespace {

using poll_fixtures::recorder;
using poll_fixtures::socket_pair;

// A poller watching one socket pair's end for a recorder.
class watched_socket : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(poller.add(p.ours, r)); }
  socket_poller poller;
  socket_pair p;
  recorder r;
};

TEST_F(watched_socket, ReportsAnEdgeOnceUntilNewDataArrives) {
  EXPECT_EQ(poller.watched(), 1u);
  p.send("a");
  poller.wait(1000);
  poller.wait(50);
  EXPECT_EQ(r.readable(), 1u) << "edge-triggered: unread data is reported once";
  p.send("b");
  poller.wait(1000);
  EXPECT_EQ(r.readable(), 2u) << "new data is a new edge";
}

TEST(SocketPoller, ARemovedDescriptorIsNotReportedEvenWithinTheBatch) {
  socket_poller poller;
  socket_pair a, b;
  recorder ra, rb;
  ASSERT_TRUE(poller.add(a.ours, ra));
  ASSERT_TRUE(poller.add(b.ours, rb));
  // Whichever edge comes first removes the other: its edge, already in the
  // same batch, must not be delivered.
  ra.on_edge = [&](std::uint32_t) { poller.remove(b.ours); };
  rb.on_edge = [&](std::uint32_t) { poller.remove(a.ours); };
  a.send("x");
  b.send("y");
  poller.wait(1000);
  EXPECT_EQ(ra.events.size() + rb.events.size(), 1u);
  EXPECT_EQ(poller.watched(), 1u);
}

TEST_F(watched_socket, ARedeliveredEdgeComesBackOnceWithoutNewBytes) {
  poller.wait(1000);  // the first edge (writable)
  const std::size_t before = r.events.size();
  poller.redeliver(p.ours, EPOLLIN);
  EXPECT_TRUE(poller.has_redeliveries());
  // No bytes arrived: only the redelivery can report anything, and the wait
  // must not block for it (a blocking wait here would take the full 5 s
  // and still find nothing).
  EXPECT_EQ(poller.wait(5000), 1u);
  ASSERT_EQ(r.events.size(), before + 1);
  EXPECT_EQ(r.events.back(), static_cast<std::uint32_t>(EPOLLIN));
  EXPECT_FALSE(poller.has_redeliveries());
  EXPECT_EQ(poller.wait(0), 0u) << "once";
}

TEST_F(watched_socket, ARedeliveryForARemovedDescriptorIsDropped) {
  poller.wait(1000);
  const std::size_t before = r.events.size();
  poller.redeliver(p.ours, EPOLLIN);
  poller.remove(p.ours);
  poller.wait(0);
  EXPECT_EQ(r.events.size(), before);
}

TEST_F(watched_socket, WhatATargetRedeliversDuringAWaitIsForTheNextOne) {
  poller.wait(1000);
  r.on_edge = [&](std::uint32_t) { poller.redeliver(p.ours, EPOLLIN); };
  p.send("a");
  EXPECT_EQ(poller.wait(1000), 1u) << "the kernel's edge only";
  EXPECT_EQ(poller.wait(1000), 1u) << "then the redelivery";
}

TEST(SocketPoller, RefusesADescriptorEpollCannotWatch) {
  socket_poller poller;
  recorder r;
  EXPECT_FALSE(poller.add(-1, r));
  const int regular = ::open("/proc/self/stat", O_RDONLY);  // files do not support epoll
  ASSERT_GE(regular, 0);
  EXPECT_FALSE(poller.add(regular, r));
  ::close(regular);
  EXPECT_EQ(poller.watched(), 0u);
}

}  // namespace
}  // namespace fg::gateway
