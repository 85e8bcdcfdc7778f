// Fuzzes the PROXY protocol header parser with what a balancer (or anyone
// allowed to pretend to be one) sends first: the answer on the whole input
// is a well-formed one (a header within the input and the limits, v1 ending
// at its first CRLF, v2 at 16 + its length, no source bytes without a
// family), and the session's way of calling it, on everything read so far,
// gives the same answer however the bytes arrive: need_more on every
// prefix shorter than the header, then the same header; for a refused
// input, need_more until one prefix fails and the same error from there on.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "gateway/http/proxy_header.hpp"
#include "tests/fuzz/check.hpp"

namespace {

namespace http = fg::http;
using fg::fuzz::check;
using status = http::proxy_parse::status;
using family = http::proxy_source::family;

// Prefixes are re-parsed one by one (quadratic): past this, the prefixes
// checked stop here; every v1 header and most v2 ones are shorter.
constexpr std::size_t max_prefix_checked = 512;

bool same_source(const http::proxy_source& a, const http::proxy_source& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.port == b.port;
}

// An accepted TCP4/TCP6 line (CRLF excluded): "PROXY TCP4 " or "PROXY TCP6 "
// then four fields of address and port characters, single spaces between.
void check_tcp_line(std::span<const std::uint8_t> line, family kind) {
  constexpr std::size_t fields_at = 11;  // "PROXY TCPn "
  check(line.size() > fields_at && line[6] == 'T' && line[7] == 'C' && line[8] == 'P' && line[10] == ' ');
  check(line[9] == (kind == family::ipv4 ? '4' : '6'));
  int spaces = 0;
  for (std::size_t i = fields_at; i < line.size(); ++i) {
    const std::uint8_t c = line[i];
    if (c == ' ') {
      ++spaces;
      check(line[i - 1] != ' ' && i + 1 < line.size());
      continue;
    }
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    check(hex || c == '.' || c == ':');
  }
  check(line[fields_at] != ' ' && spaces == 3);
}

void check_result_shape(const http::proxy_parse& r, std::span<const std::uint8_t> in) {
  check(r.what == status::need_more || r.what == status::done || r.what == status::failed);
  check((r.what == status::failed) == (r.error != http::proxy_error::none));
  if (r.what != status::done) return;

  check(r.length > 0 && r.length <= in.size() && r.length <= http::max_proxy_header_bytes);
  const http::proxy_source& s = r.source;
  check(s.kind == family::none || s.kind == family::ipv4 || s.kind == family::ipv6);
  const std::size_t address_bytes = s.kind == family::ipv6 ? 16 : s.kind == family::ipv4 ? 4 : 0;
  check(std::all_of(s.bytes.begin() + address_bytes, s.bytes.end(), [](std::uint8_t b) { return b == 0; }));
  if (s.kind == family::none) check(s.port == 0);

  if (in[0] == 'P') {
    // Version 1: "PROXY " up to the first CRLF, at most 107 bytes.
    constexpr char prefix[] = "PROXY ";
    check(r.length >= 8 && r.length <= http::max_proxy_v1_bytes);
    check(std::equal(prefix, prefix + 6, in.begin()));
    check(in[r.length - 2] == '\r' && in[r.length - 1] == '\n');
    for (std::size_t i = 0; i + 2 < r.length; ++i) check(!(in[i] == '\r' && in[i + 1] == '\n'));
    if (s.kind != family::none) check_tcp_line(in.first(r.length - 2), s.kind);
  } else {
    // Version 2: 16 fixed bytes and the length they announce.
    check(in[0] == '\r' && r.length >= 16);
    check(r.length == 16 + ((std::size_t{in[14]} << 8) | in[15]));
    check((in[12] & 0xf0) == 0x20);
    const int command = in[12] & 0x0f;
    check(command == 0 || command == 1);
    if (command == 0) check(s.kind == family::none);  // LOCAL: the real endpoints
    if (s.kind == family::ipv4) check((in[13] >> 4) == 1 && r.length >= 16 + 12);
    if (s.kind == family::ipv6) check((in[13] >> 4) == 2 && r.length >= 16 + 36);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const http::proxy_parse whole = http::parse_proxy_header(in);
  check_result_shape(whole, in);

  // Every prefix, as the session sees the bytes arrive.
  const std::size_t last = std::min(size, max_prefix_checked);
  bool failed = false;
  for (std::size_t k = 0; k <= last; ++k) {
    const auto prefix = in.first(k);
    const http::proxy_parse r = http::parse_proxy_header(prefix);
    check_result_shape(r, prefix);
    switch (whole.what) {
      case status::done:
        if (k < whole.length) {
          check(r.what == status::need_more);
        } else {
          check(r.what == status::done && r.length == whole.length && same_source(r.source, whole.source));
        }
        break;
      case status::failed:
        // No prefix is a header; once one fails, every longer one fails
        // the same way (the whole input included).
        check(r.what != status::done);
        if (failed) check(r.what == status::failed);
        if (r.what == status::failed) {
          failed = true;
          check(r.error == whole.error);
        }
        break;
      case status::need_more: check(r.what == status::need_more); break;
    }
  }
  if (whole.what == status::failed && size <= max_prefix_checked) check(failed);
  return 0;
}
