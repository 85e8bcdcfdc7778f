// write_wave on a fake clock that each write moves on: how many clients one
// slice writes, in what order, and what a write that adds a client does.
#include "gateway/net/write_wave.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <vector>

namespace fg::gateway {
namespace {

using namespace std::chrono_literals;

struct fake_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<fake_clock>;
  static inline time_point at{};
  static time_point now() noexcept { return at; }
};

class WriteWave : public ::testing::Test {
 protected:
  void SetUp() override { fake_clock::at = {}; }

  // Each write takes `each` of the fake clock's time.
  auto writer(std::chrono::nanoseconds each) {
    return [this, each](std::span<int> group) {
      groups.push_back(group.size());
      for (const int client : group) {
        written.push_back(client);
        fake_clock::at += each;
      }
    };
  }

  write_wave<int, fake_clock> wave;
  std::vector<int> written;
  std::vector<std::size_t> groups;  // the size of each group written
};

TEST_F(WriteWave, WritesEveryoneWhenTheSliceIsLongEnough) {
  for (int c = 0; c < 40; ++c) wave.add(c);
  EXPECT_FALSE(wave.write_for(250us, writer(1us)));
  EXPECT_EQ(written.size(), 40u);
  EXPECT_TRUE(wave.empty());
}

TEST_F(WriteWave, StopsOnceTheSliceIsOverAndGoesOnFromThereInOrder) {
  for (int c = 0; c < 100; ++c) wave.add(c);
  // 10 us a write: past 250 us after the 25th, seen at the next clock read (every 16).
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  EXPECT_EQ(written.size(), 32u);
  EXPECT_EQ(wave.size(), 68u);
  wave.add(100);  // deferred meanwhile, by the edges between the slices
  while (wave.write_for(250us, writer(10us))) {
  }
  ASSERT_EQ(written.size(), 101u);
  for (int c = 0; c <= 100; ++c) EXPECT_EQ(written[static_cast<std::size_t>(c)], c) << "out of order at " << c;
  EXPECT_TRUE(wave.empty());
}

TEST_F(WriteWave, AfterACutTheWritesGetThreeTimesTheLoopsOtherWork) {
  for (int c = 0; c < 200; ++c) wave.add(c);
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  ASSERT_EQ(written.size(), 32u);
  fake_clock::at += 200us;  // the rest of the loop's turn: reads that may add clients
  // max(250 us, 3 x 200 us): 600 us, seen at the clock read after the 60th write, the 64th.
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  EXPECT_EQ(written.size(), 32u + 64u);
  // Nothing else in between: back to the plain slice.
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  EXPECT_EQ(written.size(), 32u + 64u + 32u);
}

TEST_F(WriteWave, AWaveWrittenWholeForgetsItsLastCut) {
  for (int c = 0; c < 40; ++c) wave.add(c);
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  fake_clock::at += 1ms;
  EXPECT_FALSE(wave.write_for(250us, writer(10us)));
  ASSERT_EQ(written.size(), 40u);
  fake_clock::at += 10ms;  // idle: no wave was waiting
  for (int c = 0; c < 100; ++c) wave.add(c);
  EXPECT_TRUE(wave.write_for(250us, writer(10us)));
  EXPECT_EQ(written.size(), 40u + 32u) << "a new wave starts with the plain slice";
}

TEST_F(WriteWave, AClientAddedByAWriteJoinsTheBack) {
  wave.add(1);
  wave.add(2);
  const bool left = wave.write_for(250us, [&](std::span<int> group) {
    groups.push_back(group.size());
    for (const int client : group) {
      written.push_back(client);
      if (client == 1) wave.add(3);  // a write that ended its connection, and the end deferred another's output
    }
  });
  EXPECT_FALSE(left);
  EXPECT_EQ(written, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(groups, (std::vector<std::size_t>{2, 1})) << "the client added meanwhile is in a group of its own";
}

TEST_F(WriteWave, WritesInGroupsOfAtMostSixteen) {
  for (int c = 0; c < 40; ++c) wave.add(c);
  EXPECT_FALSE(wave.write_for(250us, writer(1us)));
  EXPECT_EQ(groups, (std::vector<std::size_t>{16, 16, 8}));
}

TEST_F(WriteWave, WriteGroupWritesTheOldestSixteenOutsideAnySlice) {
  for (int c = 0; c < 20; ++c) wave.add(c);
  wave.write_group(writer(1s));
  EXPECT_EQ(groups, (std::vector<std::size_t>{16}));
  EXPECT_EQ(written.front(), 0);
  EXPECT_EQ(written.back(), 15);
  EXPECT_EQ(wave.size(), 4u);
  EXPECT_EQ(wave.slices(), 0u) << "not a slice of the turn's end";
  wave.write_group(writer(1s));
  EXPECT_TRUE(wave.empty());
  wave.add(20);  // a new wave starts from a clean slate
  EXPECT_FALSE(wave.write_for(250us, writer(1us)));
  EXPECT_EQ(written.size(), 21u);
  EXPECT_EQ(written.back(), 20);
}

TEST_F(WriteWave, WriteAllIgnoresTheClock) {
  for (int c = 0; c < 200; ++c) wave.add(c);
  wave.write_all(writer(1s));
  EXPECT_EQ(written.size(), 200u);
  EXPECT_TRUE(wave.empty());
}

TEST_F(WriteWave, AnEmptyWaveHasNothingLeft) {
  EXPECT_FALSE(wave.write_for(0us, writer(1us)));
  EXPECT_EQ(wave.slices(), 0u) << "nothing was written: no slice";
  EXPECT_EQ(wave.slices_cut(), 0u);
}

TEST_F(WriteWave, CountsSlicesAndThoseCutWithClientsLeft) {
  for (int c = 0; c < 10; ++c) wave.add(c);
  EXPECT_FALSE(wave.write_for(250us, writer(1us)));
  EXPECT_EQ(wave.slices(), 1u);
  EXPECT_EQ(wave.slices_cut(), 0u);
  // 100 writes of 10 us: slices of 32 writes (the clock is read every 16), 4 in all, 3 cut.
  for (int c = 0; c < 100; ++c) wave.add(c);
  while (wave.write_for(250us, writer(10us))) {
  }
  EXPECT_EQ(wave.slices(), 5u);
  EXPECT_EQ(wave.slices_cut(), 3u);
  for (int c = 0; c < 50; ++c) wave.add(c);
  wave.write_all(writer(1s));
  EXPECT_EQ(wave.slices(), 6u) << "write_all is one slice, never cut";
  EXPECT_EQ(wave.slices_cut(), 3u);
}

}  // namespace
}  // namespace fg::gateway
