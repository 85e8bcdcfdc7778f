// The keepalive schedule a Redis connection's timeout gives, and the
// socket options it sets on a real loopback connection.
#include "worker/broker/tcp_liveness.hpp"

#include <chrono>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace fg::worker {
namespace {

using namespace std::chrono_literals;

int get_int(int fd, int level, int name) {
  int value = -1;
  socklen_t len = sizeof value;
  EXPECT_EQ(::getsockopt(fd, level, name, &value, &len), 0);
  return value;
}

TEST(KeepaliveSchedule, ProbesStartHalfwayAndSeveralComeBeforeTheTimeout) {
  const keepalive_schedule ten = keepalive_schedule_for(10s);
  EXPECT_EQ(ten.idle_s, 5);
  EXPECT_EQ(ten.interval_s, 2);
  EXPECT_EQ(ten.probes, 3);  // at 5, 7 and 9 s; the timeout ends it at the next
  const keepalive_schedule minute = keepalive_schedule_for(60s);
  EXPECT_EQ(minute.idle_s, 30);
  EXPECT_EQ(minute.interval_s, 15);
  EXPECT_EQ(minute.probes, 2);
}

TEST(KeepaliveSchedule, WholeSecondsOfAtLeastOne) {
  for (const auto timeout : {1000ms, 1500ms, 2500ms}) {
    const keepalive_schedule s = keepalive_schedule_for(timeout);
    EXPECT_EQ(s.idle_s, 1) << timeout.count();
    EXPECT_EQ(s.interval_s, 1) << timeout.count();
    EXPECT_GE(s.probes, 1) << timeout.count();
  }
}

TEST(KeepaliveSchedule, WithoutAUserTimeoutTheProbesEndItByTheTimeout) {
  // Where the kernel ignores TCP_USER_TIMEOUT, the last probe unanswered
  // ends the connection: no later than the timeout, and not long before.
  for (int t = 1; t <= 3600; ++t) {
    const keepalive_schedule s = keepalive_schedule_for(std::chrono::seconds(t));
    const int ends = s.idle_s + s.probes * s.interval_s;
    EXPECT_GE(ends, t) << t;
    EXPECT_LE(ends, t + s.interval_s) << t;
    if (t >= 2) {
      EXPECT_LT(s.idle_s, t) << t;
    }
  }
}

TEST(TcpLiveness, SetsKeepaliveAndTheUserTimeoutOnAConnectedSocket) {
  boost::asio::io_context io;
  using boost::asio::ip::tcp;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  const int fd = client.native_handle();

  EXPECT_EQ(apply_tcp_liveness(fd, 10s), "");
  EXPECT_EQ(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 5);
  EXPECT_EQ(get_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 2);
  EXPECT_EQ(get_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
  EXPECT_EQ(get_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 10000);

  EXPECT_EQ(apply_tcp_liveness(fd, 2500ms), "");
  EXPECT_EQ(get_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 2500);
}

TEST(TcpLiveness, SaysWhatTheKernelRefused) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const std::string refused = apply_tcp_liveness(pipe_fds[0], 10s);
  EXPECT_EQ(refused.rfind("SO_KEEPALIVE: ", 0), 0u) << refused;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace fg::worker
