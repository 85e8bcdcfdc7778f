#include "worker/broker/redis_envelope.hpp"

#include <algorithm>

#include "worker/broker/envelope_mac.hpp"

namespace fg::worker {

namespace {

constexpr std::string_view magics[] = {"fg1 ", "fg2 ", "fg3 ", "fg4 "};
constexpr char hex_digits[] = "0123456789abcdef";

void put_hex(char* out, std::uint64_t v, int digits = 16) {
  for (int i = digits - 1; i >= 0; --i) {
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

bool has_segment(deflated_segment s) { return !s.bytes.empty(); }

// A header of `header` bytes (filled in by the caller), then the payload,
// behind the segment's fields and bytes when there is one.
std::string with_body(std::size_t header, std::string_view payload, deflated_segment segment) {
  const std::size_t fields = has_segment(segment) ? redis_segment_fields_bytes : 0;
  std::string out;
  out.reserve(header + fields + segment.bytes.size() + payload.size());  // one allocation per publish
  out.assign(header + fields, '\0');
  if (fields != 0) {
    put_hex(out.data() + header, segment.bytes.size(), 8);
    put_hex(out.data() + header + 8, segment.covers, 8);
  }
  out.append(segment.bytes);
  out.append(payload);
  return out;
}

// Splits a version 3 or 4 body into its segment and payload.
bool split_body(std::string_view body, redis_envelope& e) {
  if (body.size() < redis_segment_fields_bytes) return false;
  const auto size = get_hex(body.substr(0, 8));
  const auto covers = get_hex(body.substr(8, 8));
  if (!size || !covers || *size == 0 || *size > body.size() - redis_segment_fields_bytes) return false;
  e.segment.bytes = body.substr(redis_segment_fields_bytes, *size);
  e.payload = body.substr(redis_segment_fields_bytes + *size);
  if (*covers > e.payload.size()) return false;
  e.segment.covers = *covers;
  return true;
}

}  // namespace

std::string encode_redis_envelope(std::uint64_t origin, std::uint64_t seq, std::string_view payload,
                                  deflated_segment segment) {
  std::string out = with_body(redis_envelope_header_bytes, payload, segment);
  put_prefix(out.data(), magics[has_segment(segment) ? 2 : 0], origin, seq);
  out[37] = '\n';
  return out;
}

std::string encode_signed_redis_envelope(const envelope_mac& mac, std::string_view channel, std::uint64_t origin,
                                         std::uint64_t seq, std::string_view payload, deflated_segment segment) {
  std::string out = with_body(redis_signed_header_bytes, payload, segment);
  put_prefix(out.data(), magics[has_segment(segment) ? 3 : 1], origin, seq);
  const std::string_view all(out);
  const auto m = mac.compute(channel, all.substr(0, redis_signed_prefix_bytes), all.substr(redis_signed_header_bytes));
  out[37] = ' ';
  std::copy(m.begin(), m.end(), out.begin() + 38);
  out[102] = '\n';
  return out;
}

std::optional<redis_envelope> parse_redis_envelope(std::string_view bytes) noexcept {
  int version = 0;
  for (int v = 1; v <= 4; ++v)
    if (bytes.starts_with(magics[v - 1])) version = v;
  if (version == 0) return std::nullopt;
  const bool is_signed = version == 2 || version == 4;
  const std::size_t header = is_signed ? redis_signed_header_bytes : redis_envelope_header_bytes;
  if (bytes.size() < header || bytes[20] != ' ' || bytes[header - 1] != '\n') return std::nullopt;
  if (is_signed && bytes[37] != ' ') return std::nullopt;
  const auto origin = get_hex(bytes.substr(4, 16));
  const auto seq = get_hex(bytes.substr(21, 16));
  if (!origin || !seq) return std::nullopt;
  redis_envelope e;
  e.version = version;
  e.origin = *origin;
  e.seq = *seq;
  const std::string_view body = bytes.substr(header);
  e.payload = body;
  if (version >= 3 && !split_body(body, e)) return std::nullopt;
  if (is_signed) {
    e.signed_prefix = bytes.substr(0, redis_signed_prefix_bytes);
    e.signed_body = body;
    e.mac = bytes.substr(38, envelope_mac::hex_size);
    if (!get_hex(e.mac.substr(0, 16)) || !get_hex(e.mac.substr(16, 16)) || !get_hex(e.mac.substr(32, 16)) ||
        !get_hex(e.mac.substr(48, 16)))
      return std::nullopt;
  }
  return e;
}

}  // namespace fg::worker
