#pragma once
// Monotonic time in nanoseconds: the one clock every timestamp of the load
// generator uses (send stamps, schedules, phases), so differences are exact.
#include <cstdint>
#include <ctime>

namespace loadgen {

inline std::uint64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall, ~20 ns
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

constexpr std::uint64_t ns_per_ms = 1'000'000ULL;
constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;

inline timespec to_timespec(std::uint64_t ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / ns_per_s);
  ts.tv_nsec = static_cast<long>(ns % ns_per_s);
  return ts;
}

// Sleeps until the absolute time t on that clock.
inline void sleep_until(std::uint64_t t) noexcept {
  const timespec ts = to_timespec(t);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}

}  // namespace loadgen
