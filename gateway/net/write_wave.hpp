// The clients whose output waits for the end of the loop's turn (a
// broadcast's: see session::defer), written in slices of time.
//
// A fan-out to a thousand clients is a wave of a thousand writes,
// milliseconds of system calls. Written in one go, the wave holds up every
// edge that comes meanwhile: a publish read after it left for its worker a
// wave late, and a worker's Send read after it missed the clients the wave
// had not reached yet, waiting for the next wave. Cut into slices, with the
// loop's edges handled between them, both go on at once (1 room x 1,000
// at 1M deliveries/s: p50 5.7 ms against 17.5 unsliced). A client is
// written once per wave whatever the slices: 6–9 deliveries per send
// there, as unsliced (docs/BENCHMARKS.md, "Ninth step" and "Tenth step").
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace fg::gateway {

// `Ref` is what keeps a client alive while it waits (session_ref); `Clock`
// a steady clock, a fake one in tests.
template <class Ref, class Clock = std::chrono::steady_clock>
class write_wave {
 public:
  // The clients are written in groups of this many (one batch of system
  // calls: send_batch), and the clock is read once per group: a write
  // costs microseconds, a clock read tens of nanoseconds.
  static constexpr std::size_t kGroup = 16;

  void add(Ref r) { waiting_.push_back(std::move(r)); }
  [[nodiscard]] bool empty() const noexcept { return head_ == waiting_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return waiting_.size() - head_; }
  // Slices that wrote someone so far, and those of them that ran out of
  // time with clients left. Under a sustained fan-out a wave never ends
  // (new clients join its back while it is written), so the share of
  // slices cut, not a count of waves, shows the pressure.
  [[nodiscard]] std::uint64_t slices() const noexcept { return slices_; }
  [[nodiscard]] std::uint64_t slices_cut() const noexcept { return slices_cut_; }

  // After a cut, the next slice lasts at least this many times the loop's
  // other work in between (the time from the cut to that slice, a lost CPU
  // included): the writes keep three quarters of a busy thread. With a
  // fixed slice per turn the turns' reads, each adding clients, outran the
  // writes at 100k deliveries/s over 100 rooms: the wave never emptied,
  // each delivery waited for a pass over it, and the extra turns cost
  // extra link writes (p50 8.3 ms; 4.7-6.5 with this; 2.5 unsliced). A
  // larger share (8: p50 3.3 ms) made slices long enough to slow the
  // one-room wave above (p50 6.8 ms instead of 5.7).
  static constexpr int kWriteShareOfOtherWork = 3;

  // Writes the waiting clients from the oldest, `write(group)` for each
  // group of up to kGroup (a std::span<Ref>), until none is left or
  // `slice` has passed (longer after a cut, see above). Clients added
  // meanwhile (a write may end a connection, and the end defer another's
  // output) join the back. True if some are left.
  template <class Write>
  bool write_for(typename Clock::duration slice, Write&& write) {
    if (empty()) return false;
    ++slices_;
    const auto start = Clock::now();
    if (cut_at_) slice = std::max(slice, kWriteShareOfOtherWork * (start - *cut_at_));
    const auto deadline = start + slice;
    for (bool first = true; head_ < waiting_.size(); first = false) {
      if (!first) {
        if (const auto now = Clock::now(); now >= deadline) {
          ++slices_cut_;
          cut_at_ = now;
          return true;
        }
      }
      write_next_group(write);
    }
    waiting_.clear();  // keeps its capacity for the next wave
    head_ = 0;
    cut_at_.reset();
    return false;
  }

  // Writes the oldest group (up to kGroup clients) now, outside any slice:
  // a busy turn's read replies, once a batch's worth waits (io_thread::after_read).
  template <class Write>
  void write_group(Write&& write) {
    if (empty()) return;
    write_next_group(write);
    if (empty()) {
      waiting_.clear();
      head_ = 0;
    }
  }

  // Every waiting client, whatever the time (a tick, the shutdown).
  template <class Write>
  void write_all(Write&& write) {
    write_for(Clock::duration::max() / 2, std::forward<Write>(write));
  }

 private:
  template <class Write>
  void write_next_group(Write& write) {
    // Moved out before the writes: they may add to the vector.
    const std::size_t n = std::min(kGroup, waiting_.size() - head_);
    std::array<Ref, kGroup> group;
    std::move(waiting_.begin() + static_cast<std::ptrdiff_t>(head_),
              waiting_.begin() + static_cast<std::ptrdiff_t>(head_ + n), group.begin());
    head_ += n;
    write(std::span<Ref>(group.data(), n));
  }

  std::vector<Ref> waiting_;
  std::size_t head_ = 0;  // waiting_[0, head_) are written
  std::uint64_t slices_ = 0;
  std::uint64_t slices_cut_ = 0;
  std::optional<typename Clock::time_point> cut_at_;  // the last slice's end, if it was cut
};

}  // namespace fg::gateway
