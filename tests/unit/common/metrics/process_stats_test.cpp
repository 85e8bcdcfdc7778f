#include "common/metrics/process_stats.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

namespace {

using namespace fg::metrics;

// A command name with spaces and parentheses, as /proc/<pid>/stat shows it.
constexpr std::string_view stat_line =
    "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 75 0 0 20 0 3 0 98765 123456789 2048 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcessStats, ParsesTimesAfterTheLastParenthesis) {
  const auto t = parse_proc_stat(stat_line);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->utime, 150u);
  EXPECT_EQ(t->stime, 75u);
  EXPECT_EQ(t->starttime, 98765u);
}

TEST(ProcessStats, RefusesTruncatedOrGarbledStat) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("4242 (name) S 1 2 3"));
  EXPECT_FALSE(parse_proc_stat("4242 name S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"));
  EXPECT_FALSE(parse_proc_stat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 ab 75 0 0 20 0 3 0 9 1 2\n"));
}

TEST(ProcessStats, ParsesBootTimeAndResidentPages) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n"), 1700000000u);
  EXPECT_EQ(parse_boot_time("btime 42\n"), 42u);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n"));
  EXPECT_EQ(parse_statm_resident_pages("5000 1234 300 10 0 900 0\n"), 1234u);
  EXPECT_FALSE(parse_statm_resident_pages("5000\n"));
}

TEST(ProcessStats, OpenDescriptorsFollowWhatTheProcessOpens) {
  const auto before = read_process_stats();
  const int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  const auto during = read_process_stats();
  ::close(fd);
  EXPECT_EQ(during.open_fds, before.open_fds + 1);
  EXPECT_GT(during.max_fds, 0u);
  EXPECT_GT(during.resident_bytes, 0u);
  EXPECT_GT(during.start_time_seconds, 1.5e9);  // after 2017
}

}  // namespace
