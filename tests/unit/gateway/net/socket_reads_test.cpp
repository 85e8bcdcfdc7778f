// The receive-timestamped read under a client socket's reads.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <string>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "gateway/net/timestamped_read.hpp"

namespace fg::gateway {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// A connected loopback TCP pair: `server` is what the gateway reads.
struct tcp_pair {
  asio::io_context io{1};
  tcp::socket client{io};
  tcp::socket server{io};
  tcp_pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
  }
  void send(const std::string& s) { asio::write(client, asio::buffer(s)); }
  // Waits (bounded) until the server side has `n` bytes to read.
  void await_bytes(std::size_t n) {
    for (int i = 0; i < 500 && server.available() < n; ++i) ::usleep(2000);
  }
};

TEST(TimestampedRead, ReturnsTheBytesAndWhenTheKernelGotThem) {
  tcp_pair p;
  ASSERT_TRUE(enable_receive_timestamps(p.server.native_handle()));
  // The kernel starts stamping packets a moment after the first socket of
  // the host asks (a deferred switch), so the first ones may come without
  // a stamp: send until one has it (each round a new packet).
  for (int round = 0; round < 200; ++round) {
    const std::int64_t before = realtime_ns();
    p.send("hello");
    p.await_bytes(5);
    std::array<std::uint8_t, 64> buf{};
    error_code ec;
    const auto r = read_timestamped(p.server.native_handle(), buf, ec);
    const std::int64_t after = realtime_ns();
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(r.bytes, 5u);
    EXPECT_EQ(std::string(buf.begin(), buf.begin() + 5), "hello");
    if (r.received_ns == 0) {
      ::usleep(5000);
      continue;
    }
    EXPECT_GE(r.received_ns, before);
    EXPECT_LE(r.received_ns, after);
    return;
  }
  FAIL() << "no read carried a receive timestamp in 200 rounds";
}

TEST(TimestampedRead, GivesNoStampWhenNotAsked) {
  tcp_pair p;
  p.send("x");
  p.await_bytes(1);
  std::array<std::uint8_t, 8> buf{};
  error_code ec;
  const auto r = read_timestamped(p.server.native_handle(), buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r.bytes, 1u);
  EXPECT_EQ(r.received_ns, 0);
}

TEST(TimestampedRead, ReportsWouldBlockAndEndOfStreamAsAsioDoes) {
  tcp_pair p;
  std::array<std::uint8_t, 8> buf{};
  error_code ec;
  read_timestamped(p.server.native_handle(), buf, ec);
  EXPECT_TRUE(ec == asio::error::would_block || ec == asio::error::try_again) << ec.message();
  p.client.shutdown(tcp::socket::shutdown_send);
  for (int i = 0; i < 500; ++i) {
    read_timestamped(p.server.native_handle(), buf, ec);
    if (ec != asio::error::would_block && ec != asio::error::try_again) break;
    ::usleep(2000);
  }
  EXPECT_EQ(ec, asio::error::eof);
}

}  // namespace
}  // namespace fg::gateway
