#include "common/memory_release.hpp"

#include <atomic>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fg {

namespace {
// Process-wide: bytes shed since the last trim (by every thread), and the
// steady clock's count, in ms, of the last trim.
std::atomic<std::size_t> shed_since_trim{0};
std::atomic<std::int64_t> last_trim_ms{INT64_MIN / 2};
}  // namespace

bool release_shed_memory(std::size_t shed_bytes, const memory_release_policy& policy) {
  const std::size_t pending = shed_since_trim.fetch_add(shed_bytes, std::memory_order_relaxed) + shed_bytes;
  if (pending < policy.min_shed_bytes) return false;
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  std::int64_t last = last_trim_ms.load(std::memory_order_relaxed);
  if (now - last < policy.min_interval.count()) return false;
  if (!last_trim_ms.compare_exchange_strong(last, now, std::memory_order_relaxed))
    return false;  // another thread trims
  shed_since_trim.store(0, std::memory_order_relaxed);
#if defined(__GLIBC__)
  ::malloc_trim(0);
  return true;
#else
  return false;  // other allocators give memory back on their own terms
#endif
}

}  // namespace fg
