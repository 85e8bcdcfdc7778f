#include "gateway/net/message_compressor.hpp"

#include "gateway/net/io_thread.hpp"

namespace fg::gateway {

std::optional<std::span<const std::uint8_t>> message_compressor::compress(std::span<const std::uint8_t> payload,
                                                                          const ws::deflate_params& p,
                                                                          std::unique_ptr<deflater>& own) {
  if (!p.server_takeover) return compress_shared(payload, p.server_window_bits);
  if (below_threshold(payload.size())) return std::nullopt;
  if (!own) own = std::make_unique<deflater>(p.server_window_bits, opt_.tuning, true);
  return run(payload, *own, true);
}

std::optional<std::span<const std::uint8_t>> message_compressor::compress_shared(std::span<const std::uint8_t> payload,
                                                                                 int window_bits) {
  if (below_threshold(payload.size())) return std::nullopt;
  return run(payload, shared_.for_window(window_bits), false);
}

bool message_compressor::below_threshold(std::size_t size) {
  if (size >= opt_.threshold) return false;
  ++counters_.deflate_skipped;  // compressing small messages costs more CPU than it saves
  return true;
}

std::optional<std::span<const std::uint8_t>> message_compressor::from_publisher(std::span<const std::uint8_t> payload,
                                                                                const deflated_prefix& pre) {
  if (below_threshold(payload.size())) return std::nullopt;
  out_.clear();
  // A Send's shape was checked when it was read (covers within the payload).
  if (!append_deflated_message(pre.segment, payload.subspan(pre.covers), out_)) return std::nullopt;
  const auto sent = counted(payload, false);
  if (sent) ++counters_.deflate_messages_from_publisher;
  return sent;
}

std::optional<std::span<const std::uint8_t>> message_compressor::run(std::span<const std::uint8_t> payload, deflater& d,
                                                                     bool takeover) {
  out_.clear();
  d.compress(payload, out_);
  // The context taken over: the client's window must see every message
  // our deflater saw.
  return counted(payload, takeover);
}

std::optional<std::span<const std::uint8_t>> message_compressor::counted(std::span<const std::uint8_t> payload,
                                                                         bool must_send) {
  // Incompressible data goes as it is (the client is spared an inflate).
  if (!must_send && out_.size() >= payload.size()) {
    ++counters_.deflate_skipped;
    return std::nullopt;
  }
  ++counters_.deflate_messages_out;
  counters_.deflate_bytes_out_uncompressed += payload.size();
  counters_.deflate_bytes_out_compressed += out_.size();
  return out_.span();
}

}  // namespace fg::gateway
