// The sending half of permessage-deflate on one I/O thread: decides which
// messages go compressed and compresses them, with the thread's shared
// deflaters (no server context takeover: one per window size, reset after
// every message) or with a connection's own (server context takeover).
// Every decision is counted once in the thread's counters.
//
// Thread-safety: one instance per I/O thread, used only on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflated_prefix.hpp"
#include "common/deflate/deflater.hpp"
#include "gateway/ws/deflate_options.hpp"

namespace fg::gateway {

struct thread_counters;

class message_compressor {
 public:
  message_compressor(const ws::deflate_options& opt, thread_counters& counters)
      : opt_(opt), counters_(counters), shared_(opt.tuning) {}

  // The compressed payload of a message for a connection that negotiated
  // `p` (valid until the next call), or nullopt when it goes uncompressed:
  // below --deflate-threshold, or (without server context takeover) when
  // compressing did not make it smaller. `own` is the connection's deflater,
  // created here on first use with server context takeover.
  std::optional<std::span<const std::uint8_t>> compress(std::span<const std::uint8_t> payload,
                                                        const ws::deflate_params& p, std::unique_ptr<deflater>& own);
  // The same with the thread's shared deflater for `window_bits` (a
  // broadcast to connections without server context takeover).
  std::optional<std::span<const std::uint8_t>> compress_shared(std::span<const std::uint8_t> payload, int window_bits);
  // The same from the compression the message's publisher made of its
  // first bytes (a worker's --publish-deflate), completed with the rest of
  // the payload in a stored block: no compression here. `pre` must fit
  // the recipients' window (deflated_prefix::fits_window).
  std::optional<std::span<const std::uint8_t>> from_publisher(std::span<const std::uint8_t> payload,
                                                              const deflated_prefix& pre);

 private:
  std::optional<std::span<const std::uint8_t>> run(std::span<const std::uint8_t> payload, deflater& d, bool takeover);
  // out_ holds `payload` compressed: counts it, or skips it when it did not
  // get smaller and may go plain (`must_send` false).
  std::optional<std::span<const std::uint8_t>> counted(std::span<const std::uint8_t> payload, bool must_send);
  bool below_threshold(std::size_t size);  // counts the skip

  const ws::deflate_options& opt_;
  thread_counters& counters_;
  deflater_set shared_;
  byte_buffer out_;
};

}  // namespace fg::gateway
