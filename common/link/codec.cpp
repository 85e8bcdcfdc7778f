#include "common/link/codec.hpp"

#include <algorithm>

#include "common/link/wire_format.hpp"

namespace fg::link {

namespace {
std::uint32_t frame_length(const std::uint8_t* h) noexcept {
  return (std::uint32_t{h[4]} << 24) | (std::uint32_t{h[5]} << 16) | (std::uint32_t{h[6]} << 8) | h[7];
}
}  // namespace

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
  std::uint8_t* p = wire::put_frame_header(out.prepare(header_size + size), static_cast<std::uint32_t>(size));
  envelope.SerializeWithCachedSizesToArray(p);
  out.commit(header_size + size);
}

decode_error decoder::check_header(const std::uint8_t* h, std::uint32_t& length) const noexcept {
  if (h[0] != magic0 || h[1] != magic1) return decode_error::bad_magic;
  if (h[2] != protocol_version) return decode_error::bad_version;
  length = frame_length(h);
  if (length > max_envelope_) return decode_error::too_large;
  return decode_error::none;
}

std::size_t decoder::top_up_pending(std::span<const std::uint8_t> in) {
  std::size_t taken = 0;
  const auto take = [&](std::size_t wanted) {
    const std::size_t n = std::min(wanted, in.size() - taken);
    pending_.append(in.subspan(taken, n));
    taken += n;
  };
  if (pending_.size() < header_size) take(header_size - pending_.size());
  if (pending_.size() < header_size) return taken;
  std::uint32_t length = 0;
  if ((failed_ = check_header(pending_.data(), length)) != decode_error::none) return taken;
  take(header_size + length - pending_.size());
  return taken;
}

bool decoder::pending_complete() const noexcept {
  if (pending_.size() < header_size) return false;
  return pending_.size() == header_size + std::size_t{frame_length(pending_.data())};
}

}  // namespace fg::link
