#include "common/memory_release.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

using fg::memory_release_policy;
using fg::release_shed_memory;

TEST(MemoryRelease, TrimsOnceThePoolsTogetherShedEnough) {
  const memory_release_policy no_wait{1024 * 1024, std::chrono::milliseconds(0)};
  release_shed_memory(no_wait.min_shed_bytes, no_wait);  // whatever earlier tests left: trimmed
  EXPECT_FALSE(release_shed_memory(0, no_wait));
  EXPECT_FALSE(release_shed_memory(600 * 1024, no_wait)) << "one thread's 600 KiB is not enough";
  bool other_thread_trimmed = true;
  std::thread([&] { other_thread_trimmed = release_shed_memory(600 * 1024, no_wait); }).join();
  EXPECT_TRUE(other_thread_trimmed) << "two threads' 1.2 MiB together is";
  EXPECT_FALSE(release_shed_memory(0, no_wait)) << "counted from zero again after a trim";
}

TEST(MemoryRelease, TrimsAtMostOncePerInterval) {
  const memory_release_policy no_wait{1, std::chrono::milliseconds(0)};
  const memory_release_policy hourly{1, std::chrono::hours(1)};
  ASSERT_TRUE(release_shed_memory(1, no_wait));
  EXPECT_FALSE(release_shed_memory(4 * 1024 * 1024, hourly)) << "a trim just ran";
  EXPECT_TRUE(release_shed_memory(0, no_wait)) << "the 4 MiB are still owed";
}

}  // namespace
