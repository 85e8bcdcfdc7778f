// Cuts a fuzz input into pieces the way reads would arrive: the first byte
// of the input seeds the piece sizes, so libFuzzer explores splits as it
// mutates that byte, and a seed starting with 0 is fed whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fg::fuzz {

inline std::vector<std::vector<std::uint8_t>> split_input(std::uint8_t seed, const std::uint8_t* data,
                                                          std::size_t size) {
  std::vector<std::vector<std::uint8_t>> pieces;
  std::uint32_t state = seed * 2654435761u + 1;                 // xorshift32, never 0
  const std::size_t max_piece = std::size_t{1} << (seed % 12);  // pieces of 1 .. 2048 bytes
  std::size_t at = 0;
  while (at < size) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    std::size_t n = seed == 0 ? size : 1 + state % max_piece;
    if (n > size - at) n = size - at;
    // Each piece is its own allocation, so ASan sees a read past its end.
    pieces.emplace_back(data + at, data + at + n);
    at += n;
  }
  return pieces;
}

}  // namespace fg::fuzz
