// Fuzzes the inflate path of permessage-deflate (RFC 7692) through the
// message reader, in two modes chosen by the third byte:
//  - frames: arbitrary client frames, RSV1 allowed and compressed messages
//    inflated, with small limits; the same bytes fed whole and in pieces
//    must give the same messages and error, and every delivered message
//    must respect the limit (on the inflated size) and the UTF-8 rules;
//  - round trip: the input is cut into messages, compressed by the
//    gateway's deflater (window, level, memLevel and context takeover from
//    the input), framed and read back: every message must come back
//    exactly, and zlib's own inflater at exactly the negotiated window
//    (8 included, which the deflater compresses with 9) must read the
//    compressed data too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "common/buffer_pool.hpp"
#include "common/deflate/deflater.hpp"
#include "common/utf8.hpp"
#include "gateway/ws/inflater.hpp"
#include "gateway/ws/message_reader.hpp"
#include "tests/fuzz/checking_handler.hpp"
#include "tests/fuzz/whole_and_split.hpp"

namespace {

using namespace fg::ws;
using fg::deflate_tuning;
using fg::deflater;

using fg::fuzz::check;
using fg::fuzz::checking_handler;

void fuzz_frames(std::uint8_t seed, std::uint8_t flags, const deflate_params& p, const std::uint8_t* data,
                 std::size_t size) {
  reader_options opt;
  opt.limits.max_message_size = 64u << (flags & 0x07);  // 64 B .. 8 KiB inflated
  opt.limits.max_fragments = 1u + ((flags >> 3) & 0x07) * 3;
  opt.validate_utf8 = (flags & 0x80) == 0;

  fg::fuzz::check_whole_and_split(
      seed, data, size, opt, [&](message_reader& r) { r.enable_deflate(p); }, false);
}

// A client frame carrying `payload`, masked with a fixed key.
void append_frame(std::vector<std::uint8_t>& out, std::uint8_t first_byte, std::span<const std::uint8_t> payload) {
  static constexpr std::uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
  out.push_back(first_byte);
  const std::size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<std::uint8_t>(0x80 | n));
  } else if (n <= 0xFFFF) {
    out.push_back(0x80 | 126);
    out.push_back(static_cast<std::uint8_t>(n >> 8));
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    out.push_back(0x80 | 127);
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(n) >> (8 * i)));
  }
  out.insert(out.end(), key, key + 4);
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(payload[i] ^ key[i & 3]));
}

// zlib's own raw inflater at exactly `bits`, reading one message (the
// compressed payload plus the RFC 7692 §7.2.2 tail).
struct zlib_reader {
  z_stream z{};
  explicit zlib_reader(int bits) { check(inflateInit2(&z, -bits) == Z_OK); }
  ~zlib_reader() { inflateEnd(&z); }
  std::vector<std::uint8_t> read(std::vector<std::uint8_t> in, std::size_t expected) {
    const std::uint8_t tail[4] = {0x00, 0x00, 0xff, 0xff};
    in.insert(in.end(), tail, tail + 4);
    std::vector<std::uint8_t> out(expected + 64);
    z.next_in = in.data();
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = ::inflate(&z, Z_SYNC_FLUSH);
    check(rc == Z_OK || rc == Z_BUF_ERROR);
    check(z.avail_in == 0);
    out.resize(out.size() - z.avail_out);
    return out;
  }
};

void fuzz_round_trip(std::uint8_t seed, std::uint8_t flags, std::uint8_t more, const std::uint8_t* data,
                     std::size_t size) {
  const int window = 8 + (more & 0x07);
  const bool takeover = (more & 0x08) != 0;
  const deflate_tuning tuning{1 + (flags & 0x07) % 9, 1 + ((flags >> 3) & 0x07)};
  deflater d(window, tuning, takeover);
  deflate_params p;
  p.enabled = true;
  p.client_takeover = takeover;
  p.client_window_bits = static_cast<std::uint8_t>(window);
  reader_options opt;
  opt.limits.max_message_size = 1u << 20;
  opt.validate_utf8 = false;

  std::vector<std::uint8_t> wire;
  std::vector<std::vector<std::uint8_t>> messages;
  zlib_reader reference(window);
  for (auto& message : fg::fuzz::split_input(seed, data, size)) {
    fg::byte_buffer c;
    d.compress(message, c);
    const std::vector<std::uint8_t> compressed(c.span().begin(), c.span().end());
    if (!takeover) inflateReset(&reference.z);
    check(reference.read(compressed, message.size()) == message);
    // The compressed payload in two frames: RSV1 on the first only (§6).
    const std::size_t cut = compressed.size() / 2;
    append_frame(wire, 0x02 | 0x40, std::span(compressed).first(cut));
    append_frame(wire, 0x80, std::span(compressed).subspan(cut));
    messages.push_back(std::move(message));
  }
  struct collecting {
    std::vector<std::vector<std::uint8_t>> got;
    void on_message(opcode, std::span<std::uint8_t> m) { got.emplace_back(m.begin(), m.end()); }
    void on_ping(std::span<std::uint8_t>) {}
    void on_pong(std::span<std::uint8_t>) {}
    void on_close(std::uint16_t, std::string_view) {}
  } h;
  fg::buffer_pool buffers;
  inflater_pool inflaters;
  message_reader r;
  r.enable_deflate(p);
  check(r.feed(wire, opt, {buffers, inflaters}, h) == error::none);
  check(h.got == messages);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::uint8_t seed = data[0];
  const std::uint8_t flags = data[1];
  const std::uint8_t more = data[2];
  data += 3;
  size -= 3;
  if (more & 0x80) {
    fuzz_round_trip(seed, flags, more, data, size);
  } else {
    deflate_params p;
    p.enabled = true;
    p.client_takeover = (more & 0x40) != 0;
    p.client_window_bits = static_cast<std::uint8_t>(8 + (more & 0x07));
    fuzz_frames(seed, flags, p, data, size);
  }
  return 0;
}
