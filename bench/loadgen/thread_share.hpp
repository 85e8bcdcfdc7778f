#pragma once
// How a run spreads its connections and random seeds over the worker threads.
#include <cstdint>
#include <vector>

namespace loadgen {

// Connection i goes to thread i % threads: each thread gets an even share
// and, in rate mode, send slots spread over the whole interval.
inline std::vector<std::uint32_t> thread_share(unsigned t, unsigned threads, std::uint32_t connections) {
  std::vector<std::uint32_t> mine;
  for (std::uint32_t i = t; i < connections; i += threads) mine.push_back(i);
  return mine;
}

inline std::uint64_t thread_seed(std::uint64_t run_start, unsigned t) {
  return run_start ^ (0x9E3779B97F4A7C15ULL * (t + 1));
}

}  // namespace loadgen
