#pragma once
// The phases of a run, shared by the main thread and the workers. The main
// thread fills `times` once the connect phase is over and then sets
// `started` (release); workers read `times` only after seeing `started`
// (acquire), so the plain fields need no atomics.
#include <atomic>
#include <cstdint>

namespace loadgen {

struct timeline {
  std::uint64_t base = 0;       // stamps in payloads are relative to this
  std::uint64_t load = 0;       // sending starts
  std::uint64_t measure = 0;    // warm-up over: latency and rates count from here
  std::uint64_t end = 0;        // no new message is scheduled from here
  std::uint64_t drain_end = 0;  // last moment to wait for echoes (--drain-max)
};

struct shared_state {
  timeline times;
  std::atomic<bool> started{false};
  std::atomic<bool> stop{false};  // SIGINT/SIGTERM or the hard stop: close now
};

}  // namespace loadgen
