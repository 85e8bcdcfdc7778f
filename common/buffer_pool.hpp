// A per-thread pool of byte buffers.
//
// Connections borrow a buffer only while they need one (a message spanning
// reads, a send backlog) and give it back at once, so an idle connection
// holds no buffer at all. The pool belongs to one thread: no locks, and a
// buffer never crosses threads. What a quiet period shows it does not need
// goes back to the allocator (shed_unused, free_list.hpp).
#pragma once

#include <cstddef>

#include "common/byte_buffer.hpp"
#include "common/free_list.hpp"

namespace fg {

class buffer_pool {
 public:
  struct limits {
    std::size_t initial_capacity = 16 * 1024;
    std::size_t max_pooled_capacity = 256 * 1024;  // larger buffers are freed, not kept
    std::size_t max_pooled_buffers = 256;
  };

  buffer_pool() = default;
  explicit buffer_pool(limits l) : limits_(l) {}

  byte_buffer acquire() {
    if (free_.empty()) return byte_buffer(limits_.initial_capacity);
    return free_.take();
  }

  void release(byte_buffer&& b) {
    if (b.capacity() == 0) return;
    if (b.capacity() > limits_.max_pooled_capacity || free_.size() >= limits_.max_pooled_buffers) {
      byte_buffer dropped = std::move(b);
      return;
    }
    b.clear();
    free_.give(std::move(b));
  }

  [[nodiscard]] std::size_t pooled() const noexcept { return free_.size(); }

  // Frees the buffers no acquire() needed since the last call; returns
  // their bytes.
  std::size_t shed_unused() {
    std::size_t bytes = 0;
    free_.shed_unused([&](const byte_buffer& b) { bytes += b.capacity(); });
    return bytes;
  }

  // The calling thread's pool.
  static buffer_pool& this_thread() {
    thread_local buffer_pool pool;
    return pool;
  }

 private:
  limits limits_{};
  free_list<byte_buffer> free_;
};

}  // namespace fg
