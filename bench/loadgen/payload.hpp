#pragma once
// What each message carries: a send stamp in its first 8 bytes, then a fixed
// ASCII pattern. The stamp uses 7 bits per byte (56 bits of nanoseconds
// since the run began, i.e. years) so that every payload byte stays below
// 0x80 and text messages are valid UTF-8: a text echo server must accept them.
#include <cstdint>
#include <cstring>
#include <vector>

namespace loadgen {

constexpr std::size_t stamp_bytes = 8;

inline void encode_stamp(std::uint8_t* p, std::uint64_t value) noexcept {
  for (std::size_t i = 0; i < stamp_bytes; ++i) p[i] = static_cast<std::uint8_t>((value >> (7 * i)) & 0x7F);
}

// False if a byte has its high bit set: the echo was not what we sent.
inline bool decode_stamp(const std::uint8_t* p, std::uint64_t& value) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < stamp_bytes; ++i) {
    if (p[i] & 0x80) return false;
    v |= std::uint64_t{p[i]} << (7 * i);
  }
  value = v;
  return true;
}

// The payload template: stamp bytes (overwritten per message) + 'a'..'z' cycle.
inline std::vector<std::uint8_t> make_payload_template(std::size_t size) {
  std::vector<std::uint8_t> p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<std::uint8_t>('a' + i % 26);
  return p;
}

}  // namespace loadgen
