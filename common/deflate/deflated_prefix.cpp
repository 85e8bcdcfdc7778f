#include "common/deflate/deflated_prefix.hpp"

#include <cstring>

namespace fg {

bool append_deflated_message(std::span<const std::uint8_t> segment, std::span<const std::uint8_t> suffix,
                             byte_buffer& out) {
  if (segment.empty() || suffix.size() > max_stored_suffix) return false;
  std::uint8_t* p = out.prepare(deflated_message_size(segment.size(), suffix.size()));
  std::memcpy(p, segment.data(), segment.size());
  if (suffix.empty()) {
    // The segment alone is the message: its empty stored block is the
    // one the receiver ends.
    out.commit(segment.size());
    return true;
  }
  p += segment.size();
  const auto len = static_cast<std::uint16_t>(suffix.size());
  const auto nlen = static_cast<std::uint16_t>(~len);
  *p++ = static_cast<std::uint8_t>(len & 0xFF);
  *p++ = static_cast<std::uint8_t>(len >> 8);
  *p++ = static_cast<std::uint8_t>(nlen & 0xFF);
  *p++ = static_cast<std::uint8_t>(nlen >> 8);
  std::memcpy(p, suffix.data(), suffix.size());
  p[suffix.size()] = 0x00;
  out.commit(deflated_message_size(segment.size(), suffix.size()));
  return true;
}

}  // namespace fg
