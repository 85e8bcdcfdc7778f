#include "common/link/wire_format.hpp"

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

}  // namespace fg::link::wire
