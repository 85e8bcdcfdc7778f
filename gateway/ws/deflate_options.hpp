// permessage-deflate (RFC 7692) settings: what the gateway offers (from
// --deflate*) and what one connection agreed to.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/deflate/deflate_tuning.hpp"

namespace fg::ws {

struct deflate_options {
  bool enabled = false;
  // Messages of fewer payload bytes are sent uncompressed: a 256 B message
  // costs 3 µs to compress (6x its whole echo) to save 160 bytes.
  std::size_t threshold = 1024;
  // Context takeover keeps a compression context per connection between
  // messages (better ratio on small similar messages, zlib state held for the
  // connection's life); without it no connection holds any zlib state.
  bool server_takeover = false;  // our compression: a deflater per connection
  bool client_takeover = false;  // the client's: an inflater per connection
  int max_window_bits = 15;      // 9..15: the largest LZ77 window compressed with, or inflated with takeover
  deflate_tuning tuning{};
};

// One connection's agreement (RFC 7692 §7.1); all false/15 when declined.
struct deflate_params {
  bool enabled = false;
  bool server_takeover = false;  // we keep our context between messages
  bool client_takeover = false;  // the client keeps its context: we inflate with a connection's own stream
  std::uint8_t server_window_bits = 15;
  std::uint8_t client_window_bits = 15;
  bool operator==(const deflate_params&) const = default;
};

}  // namespace fg::ws
