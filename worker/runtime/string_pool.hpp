// Strings kept for reuse: a message waiting in a connection's inbox needs
// its own copy of the payload (the read buffer is reused by the next
// read), and a malloc plus a free per message was ~12% of a busy echo
// worker's CPU at 1 KiB. A handled message's string comes back here and
// holds the next payload in the capacity it already has.
//
// Bounded both ways: at most max_kept strings, none larger than
// max_kept_capacity; and what a quiet period shows is not needed goes back
// (shed_unused, free_list.hpp), so one burst's strings are not kept for good.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "common/free_list.hpp"

namespace fg::worker {

class string_pool {
 public:
  static constexpr std::size_t max_kept = 4096;
  static constexpr std::size_t max_kept_capacity = 64 * 1024;

  // A string holding a copy of `bytes`, in a kept one's storage if any.
  std::string copy_of(std::string_view bytes) {
    if (kept_.empty()) return std::string(bytes);
    std::string s = kept_.take();
    s.assign(bytes);
    return s;
  }

  // Takes `s` back for a later copy_of (or lets it go, past the bounds).
  void give_back(std::string&& s) {
    if (kept_.size() < max_kept && s.capacity() <= max_kept_capacity) kept_.give(std::move(s));
  }

  [[nodiscard]] std::size_t kept() const noexcept { return kept_.size(); }

  // Frees the strings no copy_of() needed since the last call; returns
  // their bytes.
  std::size_t shed_unused() {
    std::size_t bytes = 0;
    kept_.shed_unused([&](const std::string& s) { bytes += s.capacity(); });
    return bytes;
  }

 private:
  free_list<std::string> kept_;
};

}  // namespace fg::worker
