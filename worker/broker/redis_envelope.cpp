#include "worker/broker/redis_envelope.hpp"

namespace fg::worker {

namespace {

constexpr std::string_view magic = "fg1 ";
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

}  // namespace

std::string encode_redis_envelope(std::uint64_t origin, std::uint64_t seq, std::string_view payload) {
  std::string out(redis_envelope_header_bytes + payload.size(), '\0');
  out.replace(0, magic.size(), magic);
  put_hex(out.data() + 4, origin);
  out[20] = ' ';
  put_hex(out.data() + 21, seq);
  out[37] = '\n';
  out.replace(redis_envelope_header_bytes, payload.size(), payload);
  return out;
}

std::optional<redis_envelope> parse_redis_envelope(std::string_view bytes) noexcept {
  if (bytes.size() < redis_envelope_header_bytes || !bytes.starts_with(magic) || bytes[20] != ' ' || bytes[37] != '\n')
    return std::nullopt;
  const auto origin = get_hex(bytes.substr(4, 16));
  const auto seq = get_hex(bytes.substr(21, 16));
  if (!origin || !seq) return std::nullopt;
  return redis_envelope{*origin, *seq, bytes.substr(redis_envelope_header_bytes)};
}

}  // namespace fg::worker
