#include "worker/runtime/link_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "common/link/link_socket.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"

namespace {

TEST(LinkDir, FindsOnlySocketsSortedByIndex) {
  const fg::test::scoped_temp_dir tmp("fgw-linkdir");
  const std::filesystem::path& dir = tmp.path();
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
  EXPECT_EQ(found[1].path, fg::link::link_socket_path(dir.native(), 2));

  EXPECT_TRUE(fg::worker::scan_link_dir((dir / "missing").native()).empty());
}

}  // namespace
