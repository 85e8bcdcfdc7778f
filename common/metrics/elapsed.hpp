// Nanoseconds since a steady_clock reading, as histograms take them.
#pragma once

#include <chrono>
#include <cstdint>

namespace fg::metrics {

inline std::uint64_t ns_since(std::chrono::steady_clock::time_point start) noexcept {
  const auto d = std::chrono::steady_clock::now() - start;
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

}  // namespace fg::metrics
