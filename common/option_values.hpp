// Small conversions of command-line values, shared by every framegate binary.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

// "a, b,,c" -> {"a", "b", "c"}: comma-separated items, blanks trimmed, empties dropped.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

// I/O threads for a process that shares its host with the workers: half
// the cores, at least one. On two cores one gateway thread instead of two
// cut the p99 through the workers several times (docs/BENCHMARKS.md,
// twelfth step): every extra runnable thread waits for a core.
inline unsigned half_the_cores(unsigned cores) { return std::max(1u, cores / 2); }

// A thread count as options take it: a number up to 1024 (0: one per
// core) or "half" (half_the_cores). nullopt: neither.
inline std::optional<unsigned> thread_count(std::string_view text, unsigned cores) {
  cores = std::max(1u, cores);
  if (text == "half") return half_the_cores(cores);
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || n > 1024) return std::nullopt;
  return n == 0 ? cores : n;
}

// Options give durations in (fractional) seconds.
inline std::chrono::milliseconds seconds_to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

}  // namespace fg
