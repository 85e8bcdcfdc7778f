// Hashing for sticky routing: rendezvous (highest-random-weight) hashing of
// a connection's sticky key over the live workers. When a worker joins or
// leaves, only the keys it wins (or won) move; everything else stays put.
#pragma once

#include <cstdint>
#include <string_view>

namespace fg {

// 64-bit FNV-1a, finished with the splitmix64 mixer for avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr std::uint64_t hash64(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

// The weight of (key, worker); the worker with the highest weight wins.
constexpr std::uint64_t rendezvous_weight(std::uint64_t key_hash, std::uint64_t worker_hash) noexcept {
  return mix64(key_hash ^ (worker_hash * 0x9e3779b97f4a7c15ULL));
}

// Index of the winner among `count` candidates, by their hashes; -1 if none.
// `eligible(i)` filters candidates (e.g. workers that serve the path).
template <class HashAt, class Eligible>
int rendezvous_pick(std::uint64_t key_hash, int count, HashAt&& hash_at, Eligible&& eligible) {
  int best = -1;
  std::uint64_t best_weight = 0;
  for (int i = 0; i < count; ++i) {
    if (!eligible(i)) continue;
    const std::uint64_t w = rendezvous_weight(key_hash, hash_at(i));
    if (best < 0 || w > best_weight) {
      best = i;
      best_weight = w;
    }
  }
  return best;
}

}  // namespace fg
