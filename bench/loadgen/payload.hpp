#pragma once
// What each message carries: a send stamp in its first 8 bytes, then a fixed
// ASCII pattern. The stamp uses 7 bits per byte (56 bits of nanoseconds
// since the run began, i.e. years) so that every payload byte stays below
// 0x80 and text messages are valid UTF-8: a text echo server must accept them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
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

// Comma-separated JSON records of the kind a dashboard pushes, at least
// `size` bytes, in the compact form JSON.stringify writes (a Node peer that
// re-serializes them gives the same bytes: no number ends in ".0"). ASCII, so text stays valid
// UTF-8; compressible as real traffic is (about 3x at 256 B, 5x at 1 KiB
// with zlib), where the 'a'..'z' cycle compresses 40-fold and would flatter
// compression.
// `variant` changes the values, as successive messages of one stream
// differ: repeating one message would flatter context takeover, which can
// then send each repeat as one back reference.
inline std::string json_records(std::size_t size, std::uint32_t variant = 0) {
  std::string s;
  for (std::uint32_t i = 0; s.size() < size; ++i) {
    const std::uint32_t k = i * 7 + variant * 131;
    // append() rather than operator+ chains: GCC 12 -O3 warns falsely (-Wrestrict) on those.
    if (i) s.append(",");
    s.append("{\"id\":").append(std::to_string(1000 + k));
    s.append(",\"name\":\"sensor-").append(std::to_string((i + variant) % 23));
    s.append("\",\"value\":").append(std::to_string(20 + (k * 37) % 61)).append(".").append(std::to_string(1 + k % 9));
    s.append(",\"unit\":\"C\",\"ok\":").append((i + variant) % 5 ? "true" : "false").append("}");
  }
  return s;
}

// Distinct payloads a run cycles through (64, more than a 32 KiB window
// holds at 1 KiB each), fewer for large messages (8 MiB at most).
inline std::size_t payload_variants(std::size_t size) {
  return std::clamp<std::size_t>((8u << 20) / std::max<std::size_t>(size, 1), 1, 64);
}

// --payload json: the stamp, then "[" and records, cut to `size`.
inline std::vector<std::uint8_t> make_json_payload_template(std::size_t size, std::uint32_t variant) {
  std::string s = "[";
  s.append(json_records(size, variant));
  return {s.begin(), s.begin() + static_cast<std::ptrdiff_t>(size)};
}

// Which variant a message carries: derived from its stamp, which the echo
// brings back, so the check knows what to compare with.
inline std::size_t variant_of_stamp(std::uint64_t stamp, std::size_t variants) {
  return static_cast<std::size_t>((stamp * 0x9E3779B97F4A7C15ULL) >> 40) % variants;
}

}  // namespace loadgen
