#include "common/link/codec.hpp"

namespace fg::link {

std::string_view to_string(decode_error e) noexcept {
  switch (e) {
    case decode_error::none: return "none";
    case decode_error::bad_magic: return "bad magic (not a framegate link)";
    case decode_error::bad_version: return "unsupported link protocol version";
    case decode_error::too_large: return "envelope larger than the limit";
    case decode_error::malformed: return "malformed protobuf envelope";
  }
  return "unknown";
}

void encode(const framegate::link::Envelope& envelope, byte_buffer& out) {
  const std::size_t size = envelope.ByteSizeLong();
  std::uint8_t* p = out.prepare(header_size + size);
  p[0] = magic0;
  p[1] = magic1;
  p[2] = protocol_version;
  p[3] = 0;
  p[4] = static_cast<std::uint8_t>(size >> 24);
  p[5] = static_cast<std::uint8_t>(size >> 16);
  p[6] = static_cast<std::uint8_t>(size >> 8);
  p[7] = static_cast<std::uint8_t>(size);
  envelope.SerializeWithCachedSizesToArray(p + header_size);
  out.commit(header_size + size);
}

decode_error decoder::check_header(const std::uint8_t* h, std::uint32_t& length) const noexcept {
  if (h[0] != magic0 || h[1] != magic1) return decode_error::bad_magic;
  if (h[2] != protocol_version) return decode_error::bad_version;
  length = (std::uint32_t{h[4]} << 24) | (std::uint32_t{h[5]} << 16) | (std::uint32_t{h[6]} << 8) | h[7];
  if (length > max_envelope_) return decode_error::too_large;
  return decode_error::none;
}

}  // namespace fg::link
