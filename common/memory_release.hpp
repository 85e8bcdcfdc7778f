// Gives memory that a process's pools freed back to the kernel.
//
// A pool's shed buffers go back to malloc, not to the kernel: glibc keeps
// free chunks inside its arenas (only the top of an arena's heap shrinks
// by itself), so a gateway's RSS after a burst stayed near the burst's.
// malloc_trim(0) returns the free pages of every arena (madvise). It locks
// each arena while it walks it, so a thread allocating there waits: it
// runs only when the pools (of every thread together) shed enough since the
// last trim to matter, and at most once per interval for the whole process,
// in whichever thread asks first.
#pragma once

#include <chrono>
#include <cstddef>

namespace fg {

struct memory_release_policy {
  std::size_t min_shed_bytes = 1024 * 1024;
  std::chrono::milliseconds min_interval{10'000};
};

// Called after a pool shed `shed_bytes` (0 too: what other threads shed may
// add up); true when it trimmed. Thread-safe.
bool release_shed_memory(std::size_t shed_bytes, const memory_release_policy& policy = {});

}  // namespace fg
