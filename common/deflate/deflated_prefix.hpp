// A message compressed once, by the worker that published it, for every
// member that negotiated permessage-deflate without server context
// takeover: a room message crosses Redis with its compression, so no
// gateway compresses it again (worker --publish-deflate).
//
// The publisher cannot compress the exact bytes members receive: the
// rooms app ends each delivery with the offset Redis assigns
// (`,"offset":N}` instead of the last `}`). So it compresses a prefix of
// the payload, ended by a sync flush, and the gateway appends the rest in a
// stored (uncompressed) block:
//
//   segment                 RFC 7692 payload of bytes [0, covers): DEFLATE
//                           blocks, then the header bits of an empty stored
//                           block (the sync flush), without its
//                           0x00 0x00 0xff 0xff
//   LEN, NLEN               that stored block now holds the suffix:
//                           little-endian length, and its ones' complement
//   suffix                  bytes [covers, size) of the message
//   0x00                    the header of an empty stored block, which the
//                           receiver's appended 0x00 0x00 0xff 0xff ends
//
// Valid for a receiver whose window holds every distance the segment uses:
// one compressed with window_bits w suits a window of w bits or more, and
// any window of at least `covers` bytes. The segment comes from a peer
// (a worker, through Redis): the gateway checks its shape, not its content,
// as it does not check a payload's either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/byte_buffer.hpp"

namespace fg {

struct deflated_prefix {
  std::span<const std::uint8_t> segment;  // empty: the message has none
  std::size_t covers = 0;                 // bytes of the message it compresses
  int window_bits = 15;                   // the window it was compressed with

  [[nodiscard]] bool present() const noexcept { return !segment.empty(); }
  // Whether a receiver with a window of `receiver_bits` (8..15) can inflate it.
  [[nodiscard]] bool fits_window(int receiver_bits) const noexcept {
    return window_bits <= receiver_bits || covers <= (std::size_t{1} << receiver_bits);
  }
};

// The largest suffix a stored block holds.
inline constexpr std::size_t max_stored_suffix = 65535;

// Appends the RFC 7692 payload of the message `segment` + `suffix` to
// `out` (see above). False, and nothing appended, when the suffix does not
// fit one stored block or the segment cannot be a sync-flushed one (empty).
bool append_deflated_message(std::span<const std::uint8_t> segment, std::span<const std::uint8_t> suffix,
                             byte_buffer& out);

// The size append_deflated_message adds.
constexpr std::size_t deflated_message_size(std::size_t segment, std::size_t suffix) noexcept {
  return suffix == 0 ? segment : segment + 4 + suffix + 1;
}

}  // namespace fg
