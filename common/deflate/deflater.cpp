#include "common/deflate/deflater.hpp"

#include <algorithm>
#include <new>

namespace fg {

namespace {

// zlib cannot compress with a 256-byte window (deflateInit2 refuses raw
// windowBits 8), so a negotiated 8 compresses with 9. That still honours 8:
// a 9-bit zlib deflater never reaches back further than 512 - 262 = 250
// bytes (MAX_DIST), which a 256-byte window holds.
constexpr int zlib_bits(int negotiated) { return std::clamp(negotiated, 9, 15); }

constexpr std::size_t max_chunk = std::size_t{1} << 30;  // avail_in and avail_out are 32 bits

}  // namespace

deflater::deflater(int window_bits, deflate_tuning tuning, bool takeover) : takeover_(takeover) {
  if (deflateInit2(&z_, tuning.level, Z_DEFLATED, -zlib_bits(window_bits), tuning.mem_level, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    throw std::bad_alloc();  // the parameters are validated with the configuration: only memory can be missing
}

deflater::~deflater() { deflateEnd(&z_); }

void deflater::compress(std::span<const std::uint8_t> in, byte_buffer& out) {
  if (in.empty()) {
    // §7.2.3.6. Not left to zlib: a second sync flush in a row without input
    // (context takeover) writes nothing at all, and an empty payload would
    // leave the receiver inside the stored block it appends.
    const std::uint8_t empty_block = 0x00;
    out.append(&empty_block, 1);
    return;
  }
  const std::size_t start = out.size();
  while (true) {
    const std::size_t give = std::min(in.size(), max_chunk);
    const int flush = give == in.size() ? Z_SYNC_FLUSH : Z_NO_FLUSH;
    // zlib's input pointer is not const-qualified, but deflate only reads it.
    z_.next_in = const_cast<Bytef*>(in.data());
    z_.avail_in = static_cast<uInt>(give);
    // Room for the whole chunk in one call in the common case; more than six
    // bytes always, so a flush never repeats its marker (zlib.h).
    std::size_t room = std::min<std::size_t>(deflateBound(&z_, give) + 16, max_chunk);
    do {
      z_.next_out = out.prepare(room);
      z_.avail_out = static_cast<uInt>(room);
      ::deflate(&z_, flush);  // Z_OK, or Z_BUF_ERROR when a repeated call had nothing left to do
      out.commit(room - z_.avail_out);
      room = std::max<std::size_t>(room, 4096);
    } while (z_.avail_out == 0);
    in = in.subspan(give);
    if (flush == Z_SYNC_FLUSH) break;
  }
  // The sync flush ends with an empty stored block whose last four bytes
  // are 0x00 0x00 0xff 0xff: the receiver appends them again (§7.2.1).
  if (out.size() - start >= 4) out.truncate(out.size() - 4);
  if (!takeover_) deflateReset(&z_);
}

std::size_t deflater::memory_bound(int window_bits, int mem_level) noexcept {
  constexpr std::size_t fixed_state = 6 * 1024;  // sizeof(deflate_state) in zlib 1.2.13 on 64-bit: 5.9 KiB
  return (std::size_t{1} << (zlib_bits(window_bits) + 2)) + (std::size_t{1} << (mem_level + 9)) + fixed_state;
}

deflater& deflater_set::for_window(int window_bits) {
  const int bits = zlib_bits(window_bits);  // 8 and 9 compress alike
  auto& slot = by_bits_[static_cast<std::size_t>(bits - 8)];
  if (!slot) slot = std::make_unique<deflater>(bits, tuning_, false);
  return *slot;
}

}  // namespace fg
