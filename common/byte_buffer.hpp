// A growable byte buffer that never zero-fills.
//
// std::vector<uint8_t>::resize writes zeros that are overwritten at once;
// on a gateway's data path that was measured at up to ~22% of CPU. This
// buffer only ever appends bytes that exist, so no uninitialised byte can
// be sent either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>

namespace fg {

class byte_buffer {
 public:
  byte_buffer() = default;
  explicit byte_buffer(std::size_t capacity) { reserve(capacity); }
  byte_buffer(const byte_buffer&) = delete;
  byte_buffer& operator=(const byte_buffer&) = delete;
  byte_buffer(byte_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  byte_buffer& operator=(byte_buffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  ~byte_buffer() { std::free(data_); }

  [[nodiscard]] std::uint8_t* data() noexcept { return data_; }
  [[nodiscard]] const std::uint8_t* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::span<std::uint8_t> span() noexcept { return {data_, size_}; }
  [[nodiscard]] std::span<const std::uint8_t> span() const noexcept { return {data_, size_}; }

  void clear() noexcept { size_ = 0; }
  // Keeps only the first n bytes (n <= size()).
  void truncate(std::size_t n) noexcept {
    if (n < size_) size_ = n;
  }

  void reserve(std::size_t wanted) {
    if (wanted <= capacity_) return;
    void* grown = std::realloc(data_, wanted);
    if (grown == nullptr) throw std::bad_alloc();
    data_ = static_cast<std::uint8_t*>(grown);
    capacity_ = wanted;
  }

  // Room for n more bytes, growing geometrically so that a message built
  // from many fragments costs O(log n) reallocations, not one per fragment.
  std::uint8_t* prepare(std::size_t n) {
    if (size_ + n > capacity_) {
      std::size_t next = capacity_ < 256 ? 256 : capacity_ * 2;
      while (next < size_ + n) next *= 2;
      reserve(next);
    }
    return data_ + size_;
  }
  void commit(std::size_t n) noexcept { size_ += n; }

  void append(const void* bytes, std::size_t n) {
    if (n == 0) return;
    std::memcpy(prepare(n), bytes, n);
    size_ += n;
  }
  void append(std::span<const std::uint8_t> bytes) { append(bytes.data(), bytes.size()); }

  // Drops the first n bytes (what a partial write already sent).
  void consume(std::size_t n) noexcept {
    if (n >= size_) {
      size_ = 0;
      return;
    }
    std::memmove(data_, data_ + n, size_ - n);
    size_ -= n;
  }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace fg
