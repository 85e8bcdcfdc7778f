// A room message compressed once, by the worker that publishes it
// (--publish-deflate), for both brokers: Redis carries the compression in
// its envelope (redis_envelope.hpp), the gateway hub in BrokerPublish. The
// receiving workers hand it to their gateway with each Send, so no gateway
// compresses the message again (common/deflate/deflated_prefix.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "common/byte_buffer.hpp"
#include "common/deflate/deflate_tuning.hpp"
#include "common/deflate/deflater.hpp"
#include "worker/app.hpp"

namespace fg::worker {

struct publish_compression {
  bool enabled = false;          // --publish-deflate
  std::size_t threshold = 1024;  // smaller payloads go without
  deflate_tuning tuning{};
};

class publish_compressor {
 public:
  explicit publish_compressor(const publish_compression& options);

  // The compression of the payload's first `stable_prefix` bytes (what
  // every receiving app delivers unchanged, publish_options), or none: off,
  // below the threshold, no stable prefix, a rest too long for one stored
  // block, or a compression that is not smaller. Valid until the next call.
  deflated_segment compress(std::string_view payload, std::size_t stable_prefix);

 private:
  std::size_t threshold_;
  std::unique_ptr<deflater> deflater_;  // null when off
  byte_buffer out_;
};

}  // namespace fg::worker
