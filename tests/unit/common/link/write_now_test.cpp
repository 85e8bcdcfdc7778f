// link::write_now over a real Unix socket pair: a whole batch, a full
// socket, a closed peer.
#include "common/link/write_now.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <vector>

namespace fg::link {
namespace {

class WriteNow : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_.data()), 0); }
  void TearDown() override {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  std::array<int, 2> fds_{-1, -1};
};

TEST_F(WriteNow, TakesABatchTheSocketHasRoomFor) {
  const std::vector<std::uint8_t> batch(1000, 0x5a);
  EXPECT_EQ(write_now(fds_[0], batch), batch.size());
  std::array<std::uint8_t, 2000> got{};
  EXPECT_EQ(::recv(fds_[1], got.data(), got.size(), MSG_DONTWAIT), 1000);
  EXPECT_EQ(got[999], 0x5a);
}

TEST_F(WriteNow, TakesWhatAFullSocketHasRoomForWithoutBlocking) {
  // A blocking descriptor: write_now must not wait for the reader anyway.
  const std::vector<std::uint8_t> batch(8 * 1024 * 1024, 1);
  const std::size_t first = write_now(fds_[0], batch);
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, batch.size());
  EXPECT_EQ(write_now(fds_[0], batch), 0u);  // full: nothing more, at once
}

TEST_F(WriteNow, ReportsNothingTakenWhenThePeerIsGoneAndRaisesNoSignal) {
  ::close(fds_[1]);
  fds_[1] = -1;
  const std::vector<std::uint8_t> batch(100, 2);
  EXPECT_EQ(write_now(fds_[0], batch), 0u);  // EPIPE, and the test process is still here
}

}  // namespace
}  // namespace fg::link
