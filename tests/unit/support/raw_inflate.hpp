// A receiver of permessage-deflate messages built on zlib alone, for tests
// of what the project compresses: independent of the project's inflater.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fg::test {

// Feeds one RFC 7692 message (with 00 00 ff ff appended, §7.2.2) to `z`,
// a few bytes of output at a time: so zlib enforces the window, as it
// does only for distances reaching before its current output buffer.
// nullopt on a zlib error, the end of the DEFLATE stream, or more than
// `limit` bytes.
inline std::optional<std::vector<std::uint8_t>> inflate_one(z_stream& z, std::span<const std::uint8_t> payload,
                                                            std::size_t limit) {
  std::vector<std::uint8_t> in(payload.begin(), payload.end());
  in.insert(in.end(), {0x00, 0x00, 0xff, 0xff});
  z.next_in = in.data();
  z.avail_in = static_cast<uInt>(in.size());
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[37];
  while (true) {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    const int rc = ::inflate(&z, Z_SYNC_FLUSH);
    const std::size_t produced = sizeof chunk - z.avail_out;
    out.insert(out.end(), chunk, chunk + produced);
    if (rc != Z_OK && rc != Z_BUF_ERROR) return std::nullopt;  // Z_STREAM_END, Z_DATA_ERROR...
    if (out.size() > limit) return std::nullopt;
    if (z.avail_in == 0 && z.avail_out != 0) break;  // all taken, all given out
    if (rc == Z_BUF_ERROR && produced == 0) return std::nullopt;
  }
  z.next_in = nullptr;
  return out;
}

// What a receiver does: inflates the message with a raw inflater of
// `window_bits`, then, with the same inflater (as a client that keeps its
// inflater between messages may), the RFC's "Hello" (§7.2.3.1): so a
// message that leaves the inflater inside a block header is noticed even
// when its own bytes come out right.
inline std::optional<std::vector<std::uint8_t>> inflate_message(std::span<const std::uint8_t> payload,
                                                                int window_bits = 15,
                                                                std::size_t limit = std::size_t{1} << 24) {
  z_stream z{};
  if (inflateInit2(&z, -window_bits) != Z_OK) return std::nullopt;
  auto out = inflate_one(z, payload, limit);
  static constexpr std::uint8_t hello_deflated[] = {0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00};
  const auto hello = inflate_one(z, hello_deflated, 100);
  inflateEnd(&z);
  static constexpr std::uint8_t hello_text[] = {'H', 'e', 'l', 'l', 'o'};
  if (!hello || !std::equal(hello->begin(), hello->end(), std::begin(hello_text), std::end(hello_text)))
    return std::nullopt;
  return out;
}

// The same for text: the inflated message, or "<does not inflate>".
inline std::string inflate_text(std::string_view payload, int window_bits = 15) {
  const auto out =
      inflate_message({reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()}, window_bits);
  return out ? std::string(out->begin(), out->end()) : std::string("<does not inflate>");
}

}  // namespace fg::test
