// A first-in first-out queue that owns no memory while empty.
//
// For queues kept per connection, most of them empty most of the time:
// libstdc++'s std::deque allocates its map and a 512-byte block when it is
// constructed, about 0.55 KiB per idle connection. This one is a vector
// read from an advancing head: a drained queue keeps its buffer only up to
// `kept_capacity` items (so a connection that gets one message at a time
// allocates once, not per message), and the items already taken are
// dropped from the front once they are most of the buffer (so a queue that
// never drains does not grow without bound). Not thread-safe.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace fg {

template <class T, std::size_t kept_capacity = 4>
class small_fifo {
 public:
  [[nodiscard]] bool empty() const noexcept { return head_ == items_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size() - head_; }
  // Memory held, for tests and accounting: items, not bytes.
  [[nodiscard]] std::size_t capacity() const noexcept { return items_.capacity(); }

  [[nodiscard]] T& front() noexcept { return items_[head_]; }
  [[nodiscard]] const T& front() const noexcept { return items_[head_]; }

  void push_back(T item) {
    if (head_ > 0 && head_ >= items_.size() / 2 && items_.size() == items_.capacity()) compact();
    items_.push_back(std::move(item));
  }

  // Drops the front item (the caller moved from it first, if it wanted it).
  void pop_front() noexcept {
    items_[head_] = T{};  // its resources go now, not when the buffer is next compacted
    if (++head_ == items_.size()) clear();
  }

  void clear() noexcept {
    head_ = 0;
    if (items_.capacity() > kept_capacity)
      std::vector<T>().swap(items_);
    else
      items_.clear();
  }

  [[nodiscard]] auto begin() const noexcept { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  [[nodiscard]] auto end() const noexcept { return items_.end(); }

 private:
  // Moves the live items to the front, where the taken ones were: only
  // when the buffer is full and at least half of it is taken, so each item
  // moves O(1) times on average.
  void compact() {
    items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }

  std::vector<T> items_;
  std::size_t head_ = 0;  // the front item's index
};

}  // namespace fg
