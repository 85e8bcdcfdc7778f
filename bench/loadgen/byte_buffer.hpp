#pragma once
// A growable byte queue (append at the tail, consume at the head) that never
// zero-fills: frames are written straight into prepare()d space, which
// std::vector::resize would clear first for nothing. Memory is only taken
// when a connection has something pending, and release() gives it back, so
// 15,000 idle connections cost the load generator almost nothing.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace loadgen {

class byte_buffer {
 public:
  byte_buffer() = default;
  byte_buffer(const byte_buffer&) = delete;
  byte_buffer& operator=(const byte_buffer&) = delete;
  byte_buffer(byte_buffer&& o) noexcept { swap(o); }
  byte_buffer& operator=(byte_buffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~byte_buffer() { std::free(data_); }

  std::uint8_t* data() noexcept { return data_ + head_; }
  const std::uint8_t* data() const noexcept { return data_ + head_; }
  std::size_t size() const noexcept { return tail_ - head_; }
  bool empty() const noexcept { return head_ == tail_; }

  // Room for n more bytes at the tail; commit() says how many were written.
  std::uint8_t* prepare(std::size_t n) {
    if (cap_ - tail_ < n) grow(n);
    return data_ + tail_;
  }
  void commit(std::size_t n) noexcept { tail_ += n; }
  void append(const void* p, std::size_t n) {
    std::memcpy(prepare(n), p, n);
    commit(n);
  }
  void consume(std::size_t n) noexcept {
    head_ += n;
    if (head_ == tail_) head_ = tail_ = 0;  // cheap reset keeps appends at the start
  }
  void clear() noexcept { head_ = tail_ = 0; }
  void release() noexcept {
    std::free(data_);
    data_ = nullptr;
    head_ = tail_ = cap_ = 0;
  }

 private:
  void grow(std::size_t n) {
    const std::size_t used = tail_ - head_;
    if (head_ > 0 && cap_ - used >= n && head_ >= used) {
      // Enough space once the consumed prefix is dropped: slide instead of growing.
      std::memmove(data_, data_ + head_, used);
    } else {
      std::size_t new_cap = cap_ ? cap_ : 512;
      while (new_cap - used < n) new_cap *= 2;
      auto* p = static_cast<std::uint8_t*>(std::malloc(new_cap));
      if (p == nullptr) throw std::bad_alloc();
      if (used) std::memcpy(p, data_ + head_, used);
      std::free(data_);
      data_ = p;
      cap_ = new_cap;
    }
    head_ = 0;
    tail_ = used;
  }
  void swap(byte_buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(head_, o.head_);
    std::swap(tail_, o.tail_);
    std::swap(cap_, o.cap_);
  }

  std::uint8_t* data_ = nullptr;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t cap_ = 0;
};

}  // namespace loadgen
