#include "common/metrics/process_stats.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

namespace fg::metrics {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Splits off the next space-separated field of `s`.
std::string_view next_field(std::string_view& s) {
  const auto start = s.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    s = {};
    return {};
  }
  s.remove_prefix(start);
  const auto end = s.find_first_of(" \n");
  const std::string_view field = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return field;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<proc_stat_times> parse_proc_stat(std::string_view text) {
  const auto paren = text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(paren + 1);
  // Field 3 (state) is the first after the name; utime is 14, stime 15, starttime 22.
  proc_stat_times t;
  for (int field = 3; field <= 22; ++field) {
    const std::string_view f = next_field(rest);
    if (f.empty()) return std::nullopt;
    if (field != 14 && field != 15 && field != 22) continue;
    const auto v = to_u64(f);
    if (!v) return std::nullopt;
    (field == 14 ? t.utime : field == 15 ? t.stime : t.starttime) = *v;
  }
  return t;
}

std::optional<std::uint64_t> parse_boot_time(std::string_view text) {
  constexpr std::string_view key = "btime ";
  std::size_t at = text.starts_with(key) ? 0 : text.find("\nbtime ");
  if (at == std::string_view::npos) return std::nullopt;
  if (at != 0) ++at;
  std::string_view rest = text.substr(at + key.size());
  return to_u64(next_field(rest));
}

std::optional<std::uint64_t> parse_statm_resident_pages(std::string_view text) {
  next_field(text);  // total program size
  return to_u64(next_field(text));
}

process_stats read_process_stats() {
  process_stats p;
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto times = parse_proc_stat(read_file("/proc/self/stat"));
  if (times && ticks > 0) {
    p.cpu_seconds = static_cast<double>(times->utime + times->stime) / static_cast<double>(ticks);
    if (const auto boot = parse_boot_time(read_file("/proc/stat")))
      p.start_time_seconds =
          static_cast<double>(*boot) + static_cast<double>(times->starttime) / static_cast<double>(ticks);
  }
  if (const auto pages = parse_statm_resident_pages(read_file("/proc/self/statm")); pages && page > 0)
    p.resident_bytes = *pages * static_cast<std::uint64_t>(page);
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++p.open_fds;
  if (p.open_fds > 0) --p.open_fds;  // the directory's own descriptor, open while we count
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) p.max_fds = lim.rlim_cur;
  return p;
}

}  // namespace fg::metrics
