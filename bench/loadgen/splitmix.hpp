#pragma once
// splitmix64: the load generator's only random numbers (mask keys and
// handshake nonces), which need to vary, not to be unpredictable.
#include <cstdint>

namespace loadgen {

inline std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace loadgen
