#include "worker/broker/redis_envelope.hpp"

#include <algorithm>

#include "worker/broker/envelope_mac.hpp"

namespace fg::worker {

namespace {

constexpr std::string_view magic = "fg1 ";
constexpr std::string_view magic_v2 = "fg2 ";
constexpr char hex_digits[] = "0123456789abcdef";

void put_hex(char* out, std::uint64_t v) {
  for (int i = 15; i >= 0; --i) {
    out[i] = hex_digits[v & 0xF];
    v >>= 4;
  }
}

std::optional<std::uint64_t> get_hex(std::string_view s) {
  std::uint64_t v = 0;
  for (const char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

// "fgN <origin> <seq>" into out[0, 37).
void put_prefix(char* out, std::string_view m, std::uint64_t origin, std::uint64_t seq) {
  std::copy(m.begin(), m.end(), out);
  put_hex(out + 4, origin);
  out[20] = ' ';
  put_hex(out + 21, seq);
}

}  // namespace

std::string encode_redis_envelope(std::uint64_t origin, std::uint64_t seq, std::string_view payload) {
  std::string out(redis_envelope_header_bytes + payload.size(), '\0');
  put_prefix(out.data(), magic, origin, seq);
  out[37] = '\n';
  out.replace(redis_envelope_header_bytes, payload.size(), payload);
  return out;
}

std::string encode_signed_redis_envelope(const envelope_mac& mac, std::string_view channel, std::uint64_t origin,
                                         std::uint64_t seq, std::string_view payload) {
  std::string out(redis_signed_header_bytes + payload.size(), '\0');
  put_prefix(out.data(), magic_v2, origin, seq);
  const auto m = mac.compute(channel, std::string_view(out.data(), redis_signed_prefix_bytes), payload);
  out[37] = ' ';
  std::copy(m.begin(), m.end(), out.begin() + 38);
  out[102] = '\n';
  out.replace(redis_signed_header_bytes, payload.size(), payload);
  return out;
}

std::optional<redis_envelope> parse_redis_envelope(std::string_view bytes) noexcept {
  const bool v2 = bytes.starts_with(magic_v2);
  if (!v2 && !bytes.starts_with(magic)) return std::nullopt;
  const std::size_t header = v2 ? redis_signed_header_bytes : redis_envelope_header_bytes;
  if (bytes.size() < header || bytes[20] != ' ' || bytes[header - 1] != '\n') return std::nullopt;
  if (v2 && bytes[37] != ' ') return std::nullopt;
  const auto origin = get_hex(bytes.substr(4, 16));
  const auto seq = get_hex(bytes.substr(21, 16));
  if (!origin || !seq) return std::nullopt;
  redis_envelope e{v2 ? 2 : 1, *origin, *seq, bytes.substr(header), {}, {}};
  if (v2) {
    e.signed_prefix = bytes.substr(0, redis_signed_prefix_bytes);
    e.mac = bytes.substr(38, envelope_mac::hex_size);
    if (!get_hex(e.mac.substr(0, 16)) || !get_hex(e.mac.substr(16, 16)) || !get_hex(e.mac.substr(32, 16)) ||
        !get_hex(e.mac.substr(48, 16)))
      return std::nullopt;
  }
  return e;
}

}  // namespace fg::worker
