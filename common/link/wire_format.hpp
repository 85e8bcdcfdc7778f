// Protobuf wire-format primitives for the link's hand-written fast paths
// (message_encoder.hpp, send_encoder.hpp, hot_envelopes.hpp), and the
// 8-byte frame header every envelope starts with (codec.hpp).
//
// The readers are strict on purpose: whatever they cannot vouch for
// (a group, an over-long varint, a field number 0) they report as not
// readable, and the caller hands the bytes to the generated code, which
// decides. So a hand-written reader never accepts bytes libprotobuf
// would reject, and never rejects bytes it would accept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

namespace fg::link::wire {

enum class wire_type : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

// A length-delimited value: its length, then its bytes.
inline std::uint8_t* put_bytes(std::uint8_t* p, std::span<const std::uint8_t> bytes) noexcept {
  p = put_varint(p, bytes.size());
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

// Size of an optional (proto3) bytes field: absent when empty.
constexpr std::size_t bytes_field_size(std::size_t n) noexcept { return n == 0 ? 0 : 1 + varint_size(n) + n; }

constexpr std::uint8_t tag(std::uint32_t field, wire_type type) noexcept {
  return static_cast<std::uint8_t>((field << 3) | static_cast<std::uint32_t>(type));
}

// The frame header of an envelope of `length` bytes (see codec.hpp).
std::uint8_t* put_frame_header(std::uint8_t* p, std::uint32_t length) noexcept;

// Reads a varint from [p, end) into v; null when truncated or when it is
// longer than 64 bits (a 10th byte above 1). Inline, with the one-byte case
// first: tags, lengths of small payloads and most ids are one byte, and
// these readers run several times per message on both ends of the link
// (out of line they were ~6% of a worker's CPU in a closed loop).
inline const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t& v) noexcept {
  if (p != end && *p < 0x80) {
    v = *p;
    return p + 1;
  }
  v = 0;
  for (unsigned shift = 0; shift < 64 && p != end; shift += 7) {
    const std::uint8_t b = *p++;
    // The 10th byte holds bit 63 only; anything above is not a uint64.
    if (shift == 63 && b > 1) return nullptr;
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return p;
  }
  return nullptr;
}

// One field of a message: its number and wire type, and its value (varint
// and fixed types) or its bytes (length-delimited).
struct field {
  std::uint32_t number = 0;
  wire_type type = wire_type::varint;
  std::uint64_t value = 0;
  std::span<const std::uint8_t> bytes;
};

// Reads the field at p into f; null when it is malformed or a group
// (wire types 3 and 4: legal for unknown fields, left to libprotobuf).
inline const std::uint8_t* get_field(const std::uint8_t* p, const std::uint8_t* end, field& f) noexcept {
  std::uint64_t key = 0;
  const std::uint8_t* const start = p;
  p = get_varint(p, end, key);
  // A tag is at most 5 bytes and 32 bits, with a field number of at least
  // 1 (libprotobuf's limits).
  if (p == nullptr || p - start > 5 || key > std::numeric_limits<std::uint32_t>::max() || (key >> 3) == 0)
    return nullptr;
  f.number = static_cast<std::uint32_t>(key >> 3);
  switch (key & 7) {
    case 0: f.type = wire_type::varint; return get_varint(p, end, f.value);
    case 1:
    case 5: {
      const std::size_t n = (key & 7) == 1 ? 8 : 4;
      if (static_cast<std::size_t>(end - p) < n) return nullptr;
      f.type = (key & 7) == 1 ? wire_type::fixed64 : wire_type::fixed32;
      f.value = 0;
      for (std::size_t i = 0; i < n; ++i) f.value |= std::uint64_t{p[i]} << (8 * i);
      return p + n;
    }
    case 2: {
      std::uint64_t length = 0;
      const std::uint8_t* const length_at = p;
      p = get_varint(p, end, length);
      // libprotobuf reads a length as a varint of at most 5 bytes (ReadSize),
      // padded or not; a longer one fails its parse, so it is not ours to take.
      if (p == nullptr || p - length_at > 5 || length > static_cast<std::uint64_t>(end - p)) return nullptr;
      f.type = wire_type::length_delimited;
      f.bytes = {p, static_cast<std::size_t>(length)};
      return p + length;
    }
    default: return nullptr;  // groups (3, 4) and the invalid 6, 7
  }
}

// Calls on_field(const field&) -> bool for each field of `message`, in
// order; false when a field is unreadable or on_field says stop.
template <class Fn>
bool for_each_field(std::span<const std::uint8_t> message, Fn&& on_field) {
  const std::uint8_t* p = message.data();
  const std::uint8_t* const end = p + message.size();
  while (p != end) {
    field f;
    p = get_field(p, end, f);
    if (p == nullptr || !on_field(f)) return false;
  }
  return true;
}

}  // namespace fg::link::wire
