#include "gateway/net/send_queue.hpp"

#include <algorithm>
#include <utility>

namespace fg::gateway {

void send_queue::append(std::span<const std::uint8_t> bytes, buffer_pool& pool) {
  if (backlog_.capacity() == 0) {
    // Borrow a pooled buffer if one is free; a broadcast to thousands of
    // sessions should not allocate 16 KiB for each small frame.
    backlog_ = pool.pooled() != 0 ? pool.acquire() : byte_buffer(std::max<std::size_t>(256, bytes.size()));
  }
  backlog_.append(bytes);
}

void send_queue::release(buffer_pool& pool) {
  head_ = 0;
  pool.release(std::move(backlog_));
}

}  // namespace fg::gateway
