// The per-thread epoll set of open connections: edges reach their target
// once, a removed descriptor's pending edges are dropped (a target may end
// another during a batch), and stop() lets the loop end.
#include "gateway/net/socket_poller.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace fg::gateway {
namespace {

namespace asio = boost::asio;

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
  void send(const char* s) const { ASSERT_EQ(::write(theirs, s, 1), 1); }
};

struct recorder final : poll_target {
  std::vector<std::uint32_t> events;
  std::function<void()> on_edge;
  void on_poll(std::uint32_t e) override {
    events.push_back(e);
    if (on_edge) on_edge();
  }
  [[nodiscard]] std::size_t readable() const {
    std::size_t n = 0;
    for (const auto e : events) n += (e & EPOLLIN) != 0;
    return n;
  }
};

// Runs the loop for a while (the poller's wait keeps it busy forever).
void run_for(asio::io_context& io, std::chrono::milliseconds d) {
  io.restart();
  io.run_for(d);
}

// A started poller watching one socket pair's end for a recorder.
class watched_socket : public ::testing::Test {
 protected:
  void SetUp() override {
    poller.start();
    ASSERT_TRUE(poller.add(p.ours, r));
  }
  asio::io_context io{1};
  socket_poller poller{io};
  socket_pair p;
  recorder r;
};

TEST_F(watched_socket, ReportsAnEdgeOnceUntilNewDataArrives) {
  EXPECT_EQ(poller.watched(), 1u);
  p.send("a");
  run_for(io, std::chrono::milliseconds(50));
  EXPECT_EQ(r.readable(), 1u) << "edge-triggered: unread data is reported once";
  p.send("b");
  run_for(io, std::chrono::milliseconds(50));
  EXPECT_EQ(r.readable(), 2u) << "new data is a new edge";
}

TEST(SocketPoller, ARemovedDescriptorIsNotReportedEvenWithinTheBatch) {
  asio::io_context io{1};
  socket_poller poller(io);
  poller.start();
  socket_pair a, b;
  recorder ra, rb;
  ASSERT_TRUE(poller.add(a.ours, ra));
  ASSERT_TRUE(poller.add(b.ours, rb));
  // Whichever edge comes first removes the other: its edge, already in the
  // same batch, must not be delivered.
  ra.on_edge = [&] { poller.remove(b.ours); };
  rb.on_edge = [&] { poller.remove(a.ours); };
  a.send("x");
  b.send("y");
  run_for(io, std::chrono::milliseconds(50));
  EXPECT_EQ(ra.events.size() + rb.events.size(), 1u);
  EXPECT_EQ(poller.watched(), 1u);
}

TEST_F(watched_socket, StopLetsTheLoopEnd) {
  run_for(io, std::chrono::milliseconds(50));  // takes the first edge (writable): the set is quiet now
  io.restart();
  asio::post(io, [&] { poller.stop(); });
  // Out of work, run_for() returns early and the context is stopped; the
  // poller's wait, left pending, would keep it running for the whole 5 s.
  io.run_for(std::chrono::seconds(5));
  EXPECT_TRUE(io.stopped());
  p.send("z");
  io.restart();
  io.poll();
  EXPECT_EQ(r.readable(), 0u) << "no edge is delivered once stopped";
}

TEST(SocketPoller, RefusesADescriptorEpollCannotWatch) {
  asio::io_context io{1};
  socket_poller poller(io);
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
