// The bucket layouts framegate's histograms share, so that dashboards can
// compare like with like. Durations are recorded in nanoseconds and
// exported in seconds.
#pragma once

#include <array>
#include <cstdint>

namespace fg::metrics::buckets {

inline constexpr std::uint64_t us = 1000, ms = 1000 * us, s = 1000 * ms;

// Latencies from tens of microseconds (a loopback round trip) to seconds
// (a saturated worker).
inline constexpr std::array<std::uint64_t, 17> latency_ns{50 * us,  100 * us, 250 * us,  500 * us, 1 * ms,   2500 * us,
                                                          5 * ms,   10 * ms,  25 * ms,   50 * ms,  100 * ms, 250 * ms,
                                                          500 * ms, 1 * s,    2500 * ms, 5 * s,    10 * s};

// Time the gateway itself spends on one event (a loop turn's share): a
// microsecond for a small echo, up to the milliseconds a long batch or a
// stalled loop takes. Finer at the bottom than latency_ns, whose first
// bucket (50 µs) would hold nearly every turn.
inline constexpr std::array<std::uint64_t, 16> turn_ns{1 * us,   2500,     5 * us,   10 * us, 25 * us,   50 * us,
                                                       100 * us, 250 * us, 500 * us, 1 * ms,  2500 * us, 5 * ms,
                                                       10 * ms,  25 * ms,  50 * ms,  100 * ms};

// Message sizes: a chat line to the largest message a gateway takes.
inline constexpr std::array<std::uint64_t, 11> size_bytes{64,     256,     1024,    4096,     16384,   65536,
                                                          262144, 1048576, 4194304, 16777216, 67108864};

// How many of something one operation carried (frames per read, envelopes
// per write, recipients per broadcast).
inline constexpr std::array<std::uint64_t, 14> count{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384, 65536};

}  // namespace fg::metrics::buckets
