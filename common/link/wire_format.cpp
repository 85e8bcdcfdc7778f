#include "common/link/wire_format.hpp"

#include <limits>

#include "common/link/codec.hpp"

namespace fg::link::wire {

std::uint8_t* put_frame_header(std::uint8_t* p, std::uint32_t length) noexcept {
  p[0] = magic0;
  p[1] = magic1;
  p[2] = protocol_version;
  p[3] = 0;
  p[4] = static_cast<std::uint8_t>(length >> 24);
  p[5] = static_cast<std::uint8_t>(length >> 16);
  p[6] = static_cast<std::uint8_t>(length >> 8);
  p[7] = static_cast<std::uint8_t>(length);
  return p + header_size;
}

const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t& v) noexcept {
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

const std::uint8_t* get_field(const std::uint8_t* p, const std::uint8_t* end, field& f) noexcept {
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

}  // namespace fg::link::wire
