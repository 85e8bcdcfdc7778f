// The link socket names both processes agree on, and the removal of the
// sockets a gateway's earlier run left behind.
#include "common/link/link_socket.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "tests/unit/support/scoped_temp_dir.hpp"

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

}  // namespace
