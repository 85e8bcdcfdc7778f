// In-place XOR unmasking (RFC 6455 §5.3), a SIMD register at a time.
//
// Byte-by-byte unmasking is the hottest function of a busy Node `ws`
// server; widening the 4-byte key to 16 bytes makes it memory-bound.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fg::ws {

using mask_key = std::array<std::uint8_t, 4>;

// Unmasks `size` bytes whose first byte sits at position `phase` (0..3) of
// the key, and returns the phase of the byte that would follow, so a payload
// split across reads unmasks piece by piece.
inline std::uint8_t unmask(std::uint8_t* data, std::size_t size, const mask_key& key, std::uint8_t phase) noexcept {
  std::uint8_t rotated[4];
  for (int i = 0; i < 4; ++i) rotated[i] = key[(phase + i) & 3];
  std::uint32_t k32;
  std::memcpy(&k32, rotated, 4);
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i k128 = _mm_set1_epi32(static_cast<int>(k32));
  for (; i + 16 <= size; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(data + i), _mm_xor_si128(v, k128));
  }
#endif
  const std::uint64_t k64 = (static_cast<std::uint64_t>(k32) << 32) | k32;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    w ^= k64;
    std::memcpy(data + i, &w, 8);
  }
  for (; i < size; ++i) data[i] ^= rotated[i & 3];
  return static_cast<std::uint8_t>((phase + size) & 3);
}

}  // namespace fg::ws
