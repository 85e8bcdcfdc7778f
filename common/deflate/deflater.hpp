// Compression of permessage-deflate messages (RFC 7692 §7.2.1).
//
// One zlib raw-deflate stream. Without context takeover it is reset after
// every message, so one stream per window size serves every connection of
// a thread (deflater_set) and a broadcast is compressed once for all the
// recipients that share its window size. With context takeover a
// connection owns one, and it keeps its window between messages.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <zlib.h>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflate_tuning.hpp"

namespace fg {

class deflater {
 public:
  // `window_bits` 8..15 as negotiated (zlib compresses 8 with 9, see .cpp).
  deflater(int window_bits, deflate_tuning tuning, bool takeover);
  ~deflater();
  deflater(const deflater&) = delete;
  deflater& operator=(const deflater&) = delete;

  // Appends the compressed payload of the message `in` to `out`: its
  // DEFLATE blocks ended by a sync flush, without the 0x00 0x00 0xff 0xff
  // tail (§7.2.1). An empty message compresses to the single byte 0x00.
  void compress(std::span<const std::uint8_t> in, byte_buffer& out);

  // zlib's documented bound on the memory of one stream (zlib.h,
  // deflateInit2) plus its fixed state, in bytes.
  static std::size_t memory_bound(int window_bits, int mem_level) noexcept;

 private:
  z_stream z_{};
  bool takeover_;
};

// A thread's shared deflaters without context takeover, one per window size
// in use, created on first use.
class deflater_set {
 public:
  explicit deflater_set(deflate_tuning tuning) : tuning_(tuning) {}
  deflater& for_window(int window_bits);

 private:
  deflate_tuning tuning_;
  std::array<std::unique_ptr<deflater>, 8> by_bits_{};  // window bits 8..15
};

}  // namespace fg
