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
// longer than 64 bits (a 10th byte above 1).
const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t& v) noexcept;

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
const std::uint8_t* get_field(const std::uint8_t* p, const std::uint8_t* end, field& f) noexcept;

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
