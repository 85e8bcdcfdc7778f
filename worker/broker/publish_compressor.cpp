#include "worker/broker/publish_compressor.hpp"

#include <algorithm>

#include "common/deflate/deflated_prefix.hpp"

namespace fg::worker {

publish_compressor::publish_compressor(const publish_compression& options)
    : threshold_(options.threshold),
      deflater_(options.enabled ? std::make_unique<deflater>(15, options.tuning, false) : nullptr) {}

deflated_segment publish_compressor::compress(std::string_view payload, std::size_t stable_prefix) {
  if (!deflater_ || payload.size() < threshold_) return {};
  stable_prefix = std::min(stable_prefix, payload.size());
  // A stored block holds the rest: at most 64 KiB of it.
  if (stable_prefix == 0 || payload.size() - stable_prefix > max_stored_suffix) return {};
  out_.clear();
  deflater_->compress({reinterpret_cast<const std::uint8_t*>(payload.data()), stable_prefix}, out_);
  // Not smaller: members get the plain message, as from a gateway.
  if (out_.size() >= stable_prefix) return {};
  return {{reinterpret_cast<const char*>(out_.data()), out_.size()}, stable_prefix};
}

}  // namespace fg::worker
