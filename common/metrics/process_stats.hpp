// The process's own resources, read from /proc (Linux). The parsers are
// pure functions over the files' text so they can be tested on any input.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fg::metrics {

struct process_stats {
  double cpu_seconds = 0;  // user + system
  std::uint64_t resident_bytes = 0;
  std::uint64_t open_fds = 0;
  std::uint64_t max_fds = 0;
  double start_time_seconds = 0;  // since the Unix epoch
};

// Reads every field it can; a field it cannot read stays 0.
process_stats read_process_stats();

// /proc/self/stat: utime, stime and starttime, in clock ticks. The command
// name (field 2) may contain spaces and parentheses: fields are counted
// from the last ')'.
struct proc_stat_times {
  std::uint64_t utime = 0, stime = 0, starttime = 0;
};
std::optional<proc_stat_times> parse_proc_stat(std::string_view text);

// /proc/stat: the boot time ("btime N"), seconds since the epoch.
std::optional<std::uint64_t> parse_boot_time(std::string_view text);

// /proc/self/statm: the second field, resident pages.
std::optional<std::uint64_t> parse_statm_resident_pages(std::string_view text);

}  // namespace fg::metrics
