// Decompression of permessage-deflate messages (RFC 7692 §7.2.2), bounded.
//
// One zlib raw-inflate stream. A message is inflated piece by piece as its
// frames arrive; the output goes into the caller's buffer and is checked
// against a limit as it is produced, so a message that inflates past
// --max-message-size (a zip bomb) fails after at most limit + 1 bytes were
// written, not after the memory is spent.
//
// Without client context takeover one stream serves every connection of a
// thread, one message at a time: inflaters are borrowed from the thread's
// pool for the length of one message, so an idle connection holds none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <zlib.h>

#include "common/byte_buffer.hpp"
#include "common/free_list.hpp"
#include "gateway/ws/protocol.hpp"

namespace fg::ws {

class inflater {
 public:
  // `window_bits` (8..15) is the LZ77 window the peer compresses with.
  explicit inflater(int window_bits = 15);
  ~inflater();
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;

  // Inflates `in` (a piece of a compressed message) and appends the output
  // to `out`. message_too_big as soon as `out` would hold more than `limit`
  // bytes; invalid_deflate_data for a corrupt stream.
  error inflate(std::span<const std::uint8_t> in, byte_buffer& out, std::uint64_t limit);
  // Ends a message: inflates the 0x00 0x00 0xff 0xff that the sender
  // removed (§7.2.2), so every byte of the message is flushed to `out`.
  error finish_message(byte_buffer& out, std::uint64_t limit);
  // Forgets the context (no context takeover, or a stream that failed).
  void reset() noexcept;

  // zlib's documented memory of one stream (zlib.h, inflateInit2): the
  // window, allocated on first output, plus its fixed state, in bytes.
  static std::size_t memory_bound(int window_bits) noexcept;

 private:
  z_stream z_{};
  bool ended_ = false;  // the message held a final block (BFINAL, §7.2.3.3): the rest of it is ignored
};

// Free inflaters (32 KiB window, so they read any peer's data).
class inflater_pool {
 public:
  std::unique_ptr<inflater> acquire();
  // Resets the inflater and keeps it for the next message.
  void release(std::unique_ptr<inflater> i);
  [[nodiscard]] std::size_t pooled() const noexcept { return free_.size(); }
  // Frees the inflaters no acquire() needed since the last call (free_list.hpp);
  // returns how many.
  std::size_t shed_unused() { return free_.shed_unused(); }

  // The calling thread's pool, which the gateway's sessions pass to their
  // readers.
  static inflater_pool& this_thread();

 private:
  static constexpr std::size_t max_pooled = 64;  // more partial compressed messages at once than this are rare
  free_list<std::unique_ptr<inflater>> free_;
};

}  // namespace fg::ws
