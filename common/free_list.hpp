// The free items of a per-thread pool, which gives back what a quiet spell
// shows it does not need.
//
// A pool sized by its busiest second keeps that second's memory for good:
// after a burst of large messages or slow readers, a thread could hold its
// pool's limit (buffer_pool: 256 buffers of up to 256 KiB) long after the
// burst. shed_unused(), called once per period, frees the items that sat
// unused through the whole period (the fewest free at any moment since the
// last call): a steady load keeps what it draws on, a spike's surplus goes
// after one quiet period.
//
// Taken and given back at the back (the most recently used, warm in cache);
// shed from the front. Single-threaded, like the pools that hold it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace fg {

template <class T>
class free_list {
 public:
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }

  // Precondition: !empty().
  T take() {
    T item = std::move(items_.back());
    items_.pop_back();
    low_water_ = std::min(low_water_, items_.size());
    return item;
  }

  void give(T&& item) { items_.push_back(std::move(item)); }

  // Frees what no take() needed since the last call; `on_free` sees each
  // item first (to count its bytes). Returns how many went.
  template <class OnFree>
  std::size_t shed_unused(OnFree&& on_free) {
    const std::size_t unused = std::min(low_water_, items_.size());
    const auto end = items_.begin() + static_cast<std::ptrdiff_t>(unused);
    for (auto it = items_.begin(); it != end; ++it) on_free(*it);
    items_.erase(items_.begin(), end);
    low_water_ = items_.size();
    return unused;
  }
  std::size_t shed_unused() {
    return shed_unused([](const T&) {});
  }

 private:
  std::vector<T> items_;
  std::size_t low_water_ = 0;  // the fewest free since the last shed_unused()
};

}  // namespace fg
