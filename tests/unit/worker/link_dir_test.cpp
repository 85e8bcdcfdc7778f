#include "worker/runtime/link_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

namespace {

using fg::worker::parse_link_socket_name;

TEST(LinkDir, ParsesLinkSocketNames) {
  EXPECT_EQ(parse_link_socket_name("link-0.sock"), 0u);
  EXPECT_EQ(parse_link_socket_name("link-12.sock"), 12u);
  EXPECT_FALSE(parse_link_socket_name("link-.sock"));
  EXPECT_FALSE(parse_link_socket_name("link-01.sock"));
  EXPECT_FALSE(parse_link_socket_name("link-1x.sock"));
  EXPECT_FALSE(parse_link_socket_name("link-+1.sock"));
  EXPECT_FALSE(parse_link_socket_name("link-1.sock.tmp"));
  EXPECT_FALSE(parse_link_socket_name("xlink-1.sock"));
  EXPECT_FALSE(parse_link_socket_name("link-99999999999.sock"));
}

TEST(LinkDir, FindsOnlySocketsSortedByIndex) {
  const auto dir = std::filesystem::temp_directory_path() / ("fgw-linkdir-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  boost::asio::io_context io;
  using proto = boost::asio::local::stream_protocol;
  proto::acceptor a2(io, proto::endpoint((dir / "link-2.sock").native()));
  proto::acceptor a0(io, proto::endpoint((dir / "link-0.sock").native()));
  std::ofstream((dir / "link-1.sock").native()) << "a regular file, not a socket";
  std::ofstream((dir / "other.txt").native()) << "x";

  const auto found = fg::worker::scan_link_dir(dir.native());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 0u);
  EXPECT_EQ(found[1].index, 2u);
  EXPECT_EQ(found[1].path, fg::worker::link_socket_path(dir.native(), 2));

  EXPECT_TRUE(fg::worker::scan_link_dir((dir / "missing").native()).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
