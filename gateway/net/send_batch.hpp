// Many client sockets' writes in one system call (io_uring).
//
// On this kind of VM a system call costs about a microsecond before it
// does anything (a null one: 1.0 us), and a 64-byte send() to a loopback
// TCP socket 4.4-5.7 us of the thread's CPU; the same sends submitted
// sixteen at a time through io_uring 3.0-3.7 us each, one at a time a
// little more than send() (docs/BENCHMARKS.md, "Thirteenth step"). The
// end of a loop turn writes many clients at once (a fan-out's wave, the
// replies to the turn's reads), so those writes go out as batches.
//
// Every send is non-blocking (MSG_DONTWAIT): io_uring then completes it
// during the submission with what the socket took, or -EAGAIN when it is
// full, the answer send() gives. Nothing stays in flight after submit(),
// so the bytes need live only until it returns, and the caller's write
// path (send_queue) does not change.
//
// Without a ring (--io-uring off, or a kernel or seccomp profile that
// refuses one) submit() makes one send() per write: the same answers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "gateway/net/write_result.hpp"

namespace fg::gateway {

class send_batch {
 public:
  static constexpr std::size_t kCapacity = 16;  // a bit per slot in submit()'s 32-bit mask

  // With `use_ring`, sets up a ring; if the kernel refuses, ring_problem()
  // says why and every write is a send() of its own.
  explicit send_batch(bool use_ring);
  ~send_batch();
  send_batch(const send_batch&) = delete;
  send_batch& operator=(const send_batch&) = delete;

  [[nodiscard]] bool uses_ring() const noexcept { return ring_ != nullptr; }
  // Why a ring asked for is not there (empty otherwise).
  [[nodiscard]] const std::string& ring_problem() const noexcept { return problem_; }

  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool full() const noexcept { return count_ == kCapacity; }
  // Queues one send of `bytes` to the stream socket `fd` (not when full());
  // returns its slot for result().
  std::size_t add(int fd, std::span<const std::uint8_t> bytes) noexcept;
  // Sends everything queued. Returns the system calls it took: one for a
  // ring's batch, one per write otherwise.
  std::size_t submit() noexcept;
  // After submit(): what the socket of `slot` took.
  [[nodiscard]] write_result result(std::size_t slot) const noexcept { return results_[slot]; }
  // Empties the batch for the next add()s.
  void clear() noexcept { count_ = 0; }

  // Whether this kernel gives this process a ring; empty if so, else why not.
  [[nodiscard]] static std::string probe();

  // For tests: each ring batch offers the kernel only its first `n`
  // entries, as a kernel short of memory takes only some (submit() then
  // meets a partial submission, which nothing else here can cause).
  void offer_at_most_for_test(std::size_t n) noexcept { offer_limit_ = n; }
  // For tests: after `n` answers of a ring batch, waiting for the next one
  // fails (EIO), as io_uring_wait_cqe would if the ring broke: the entries
  // the kernel took but did not answer may have gone out.
  void answer_at_most_for_test(std::size_t n) noexcept { answer_limit_ = n; }

 private:
  struct ring;
  struct entry {
    int fd = -1;
    std::span<const std::uint8_t> bytes;
  };

  std::size_t send_each() noexcept;
  // The ring failed mid-batch: drop it (what it had not sent never will
  // be) and go on with send().
  void drop_ring(int error) noexcept;

  std::unique_ptr<ring> ring_;
  std::string problem_;
  std::array<entry, kCapacity> entries_{};
  std::array<write_result, kCapacity> results_{};
  std::size_t count_ = 0;
  std::size_t offer_limit_ = kCapacity;
  std::size_t answer_limit_ = kCapacity;
};

}  // namespace fg::gateway
