// The link socket names both processes agree on, the removal of the
// sockets a gateway's earlier run left behind, and the send buffer both
// ends ask for.
#include "common/link/link_socket.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "tests/unit/support/scoped_temp_dir.hpp"
#include "tests/unit/support/unix_socket_probe.hpp"

namespace {

using fg::link::link_socket_name;
using fg::link::link_socket_path;
using fg::link::parse_link_socket_name;
using proto = boost::asio::local::stream_protocol;

TEST(LinkSocket, NamesALinkByItsIndex) {
  EXPECT_EQ(link_socket_name(0), "link-0.sock");
  EXPECT_EQ(link_socket_name(12), "link-12.sock");
  EXPECT_EQ(link_socket_name(std::numeric_limits<std::uint32_t>::max()), "link-4294967295.sock");
}

TEST(LinkSocket, ParsesEveryNameItMakesBackToItsIndex) {
  for (const std::uint32_t index : {0u, 1u, 9u, 10u, 99u, 100u, 65535u, 4294967295u})
    EXPECT_EQ(parse_link_socket_name(link_socket_name(index)), index) << index;
}

TEST(LinkSocket, ParsesNoOtherName) {
  for (const char* name : {"", "link-.sock", "link-01.sock", "link-00.sock", "link-1x.sock", "link-+1.sock",
                           "link--1.sock", "link- 1.sock", "link-1.sock.tmp", "link-1.socket", "xlink-1.sock",
                           "LINK-1.sock", "link-1", "link-4294967296.sock", "link-99999999999.sock"})
    EXPECT_FALSE(parse_link_socket_name(name)) << name;
}

TEST(LinkSocket, PathIsTheNameInsideTheDirectory) {
  EXPECT_EQ(link_socket_path("/run/framegate", 3), "/run/framegate/link-3.sock");
  EXPECT_EQ(link_socket_path("/run/framegate/", 3), "/run/framegate/link-3.sock");
  EXPECT_EQ(link_socket_path("rel", 0), "rel/link-0.sock");
}

class LinkSocketDir : public ::testing::Test {
 protected:
  [[nodiscard]] std::filesystem::path at(const std::string& name) const { return dir_ / name; }

  fg::test::scoped_temp_dir tmp_{"fg-link-socket"};
  const std::filesystem::path dir_ = tmp_.path();
};

TEST_F(LinkSocketDir, RemovesStaleSocketsSoTheirPathsCanBeBoundAgain) {
  boost::asio::io_context io;
  {
    // A listener that went away without unlinking: its socket file stays.
    proto::acceptor a0(io, proto::endpoint(link_socket_path(dir_.native(), 0)));
    proto::acceptor a7(io, proto::endpoint(link_socket_path(dir_.native(), 7)));
  }
  ASSERT_TRUE(std::filesystem::is_socket(at("link-0.sock")));
  EXPECT_THROW((void)proto::acceptor(io, proto::endpoint(link_socket_path(dir_.native(), 0))),
               boost::system::system_error);

  EXPECT_EQ(fg::link::remove_link_sockets(dir_.native()), 2u);

  EXPECT_FALSE(std::filesystem::exists(at("link-0.sock")));
  EXPECT_FALSE(std::filesystem::exists(at("link-7.sock")));
  EXPECT_NO_THROW((void)proto::acceptor(io, proto::endpoint(link_socket_path(dir_.native(), 0))));
}

TEST_F(LinkSocketDir, LeavesEveryOtherNameAlone) {
  for (const char* name : {"notes.txt", "link-1.sock.tmp", "link-x.sock", "link-01.sock"})
    std::ofstream(at(name).native()) << "not ours";
  std::ofstream(at("link-2.sock").native()) << "named like a link socket: removed whatever it is";

  EXPECT_EQ(fg::link::remove_link_sockets(dir_.native()), 1u);

  EXPECT_FALSE(std::filesystem::exists(at("link-2.sock")));
  for (const char* name : {"notes.txt", "link-1.sock.tmp", "link-x.sock", "link-01.sock"})
    EXPECT_TRUE(std::filesystem::exists(at(name))) << name;
}

TEST_F(LinkSocketDir, AMissingDirectoryHasNone) {
  EXPECT_EQ(fg::link::remove_link_sockets(at("missing").native()), 0u);
}

// A connected pair of Unix stream sockets, as a link is; closed at the end.
class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0); }
  ~SocketPair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  [[nodiscard]] int one() const { return fds_[0]; }
  [[nodiscard]] int other() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

class LinkSendBuffer : public ::testing::Test {
 protected:
  std::ostringstream log_text_;
  std::shared_ptr<spdlog::logger> log_ =
      std::make_shared<spdlog::logger>("link-sndbuf-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text_));

  [[nodiscard]] std::size_t warnings() const {
    std::size_t n = 0;
    const std::string text = log_text_.str();
    for (auto at = text.find("net.core.wmem_max"); at != std::string::npos; at = text.find("net.core.wmem_max", at + 1))
      ++n;
    return n;
  }
};

TEST_F(LinkSendBuffer, AsksForItAndReportsWhatTheKernelGranted) {
  SocketPair pair;
  constexpr int asked = 96 * 1024;  // below any host's net.core.wmem_max
  fg::link::link_send_buffer sndbuf(asked, log_);
  EXPECT_EQ(sndbuf.apply(pair.one()), 2 * asked);  // Linux doubles it for its bookkeeping
  EXPECT_EQ(fg::test::send_buffer_of(pair.one()), 2 * asked);
  EXPECT_EQ(warnings(), 0u);
}

TEST_F(LinkSendBuffer, ZeroLeavesTheKernelsDefault) {
  SocketPair pair;
  const int before = fg::test::send_buffer_of(pair.one());
  fg::link::link_send_buffer sndbuf(0, log_);
  EXPECT_EQ(sndbuf.apply(pair.one()), before);
  EXPECT_EQ(fg::test::send_buffer_of(pair.one()), before);
  EXPECT_EQ(warnings(), 0u);
}

TEST_F(LinkSendBuffer, ARequestTheKernelCapsIsGrantedInPartAndWarnedOfOnce) {
  long wmem_max = 0;
  std::ifstream("/proc/sys/net/core/wmem_max") >> wmem_max;
  if (wmem_max <= 0 || wmem_max >= (1L << 29))
    GTEST_SKIP() << "no cap to run into (net.core.wmem_max " << wmem_max << ")";
  const int asked = static_cast<int>(wmem_max) * 2;
  fg::link::link_send_buffer sndbuf(asked, log_);
  SocketPair first;
  SocketPair second;
  EXPECT_EQ(sndbuf.apply(first.one()), 2 * wmem_max);
  EXPECT_EQ(sndbuf.apply(second.one()), 2 * wmem_max);
  EXPECT_EQ(warnings(), 1u) << log_text_.str();
}

TEST_F(LinkSendBuffer, ASocketThatRefusesGrantsNothing) {
  fg::link::link_send_buffer sndbuf(96 * 1024, log_);
  EXPECT_EQ(sndbuf.apply(-1), 0);
}

}  // namespace
