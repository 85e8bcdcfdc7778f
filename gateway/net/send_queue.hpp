// The bytes of one connection that the socket has not taken yet.
//
// The queue owns no socket: each call that may write is given a writer,
// `write_result write(std::span<const std::uint8_t>)`, one non-blocking
// write attempt, and answers with what the owner must do next (arm a wait
// for writability, shut down, close). Tests drive it with a scripted writer.
// It belongs to one session on one thread; the buffer pool is passed to
// each call because the thread that ends a connection need not be the one
// that started it (a forced shutdown ends the last ones on the main thread).
//
// The write path: when does a byte reach the socket?
//
//   session::send*()  frames appended to the thread's cork (io_thread::cork_for)
//        |
//        |  the turn ends (io_thread::uncork)        the cork moves to another
//        |                                           session mid-turn (a broadcast)
//        v                                                   v
//   flush(corked)                                       defer(corked)
//     deferred?  -> append to the backlog, behind        copy into the backlog (take a large
//                   the deferred bytes                   cork whole instead); unless a
//                                                      write is armed, mark `deferred`
//     write armed? -> append to the backlog              and have io_thread call
//     else write straight from the cork (no copy);       flush_deferred() once the turn
//          the rest goes to the backlog                  ends, after every uncork
//        |                                                   |
//        |                                                   v
//        |                                           flush_deferred(): unless a write
//        |                                           is armed, one write of the backlog
//        |                                           (with --io-uring, sixteen sessions'
//        |                                           writes in one batch: deferred_write()
//        |                                           names the bytes, the batch sends them,
//        |                                           the writer returns its answer)
//        v                                                   |
//   bytes left -> next::wait_writable: the session arms one wait (`write armed`)
//        |        on_writable() writes the backlog; still bytes left -> wait again;
//        |        more than half written -> compact (not on every partial write)
//        v
//   nothing left -> next::drained: the pooled backlog buffer goes back to the pool;
//        a session that is draining (its close is done) sends its FIN now
//        (session::shutdown_send). finish() sends it at once when no write is
//        armed or deferred and nothing is corked.
//
// So a byte reaches the socket at the end of the loop turn in which it was
// sent (one write per session per turn; a read's replies with --io-uring
// off go right after the read), or when the socket says it is
// writable again; never two writes in flight, and always in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "common/buffer_pool.hpp"
#include "common/byte_buffer.hpp"
#include "gateway/net/write_result.hpp"

namespace fg::gateway {

class send_queue {
 public:
  // What the owner does after a call that may have written.
  enum class next : std::uint8_t {
    nothing,        // bytes wait for an armed write or a deferred flush
    wait_writable,  // bytes left: arm one wait for writability, then call on_writable()
    drained,        // everything handed over so far is written
    failed,         // the writer failed: the connection is broken
  };

  send_queue() = default;
  send_queue(const send_queue&) = delete;
  send_queue& operator=(const send_queue&) = delete;

  // Bytes waiting in the backlog (the socket did not take them yet).
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return backlog_.size() - head_; }
  // A wait for writability is armed (next::wait_writable was returned and
  // on_writable() not called yet).
  [[nodiscard]] bool write_armed() const noexcept { return writing_; }
  // Bytes will be written later without another call to flush(): by an
  // armed write or at the end of the turn.
  [[nodiscard]] bool write_pending() const noexcept { return writing_ || deferred_; }

  // The send-queue limit (--max-send-queue): may a frame of `frame_size`
  // be queued, with `corked` bytes of this connection in the cork? An empty
  // queue always takes one frame, so a message of the largest allowed size
  // can be sent whatever the two limits are.
  [[nodiscard]] bool has_room(std::size_t frame_size, std::size_t corked, std::size_t limit) const noexcept {
    const std::size_t queued = queued_bytes() + corked;
    return queued == 0 || queued + frame_size <= limit;
  }

  // Writes what was corked this turn (`corked` is not empty); the socket is
  // written directly from it unless older bytes must go first.
  template <class Writer>
  next flush(std::span<const std::uint8_t> corked, buffer_pool& pool, Writer&& write) {
    if (deferred_) {
      append(corked, pool);  // behind the deferred bytes, written at the end of the turn
      return next::nothing;
    }
    if (!writing_) {
      const write_result r = write(corked);
      if (r.what == write_result::status::failed) return next::failed;
      if (r.what == write_result::status::written) corked = corked.subspan(r.bytes);
    }
    if (corked.empty()) return next::drained;
    append(corked, pool);
    return arm_write();
  }

  // Keeps what was corked (`corked` is not empty) for one write at the end
  // of the turn. True when the owner must schedule flush_deferred(); false
  // when it already is, or an armed write will take the bytes.
  // A cork of at least take_whole_bytes, with no backlog yet, becomes the
  // backlog as it is and `corked` gets a pooled buffer: a worker's replies
  // to one client are copied once (into the cork), not twice. Smaller ones
  // are copied, so that a broadcast's many recipients each hold what they
  // got, not a cork-sized buffer.
  static constexpr std::size_t take_whole_bytes = 4096;
  [[nodiscard]] bool defer(byte_buffer& corked, buffer_pool& pool) {
    if (backlog_.capacity() == 0 && corked.size() >= take_whole_bytes) {
      backlog_ = std::move(corked);
      corked = pool.acquire();
    } else {
      append(corked.span(), pool);
    }
    if (writing_ || deferred_) return false;
    deferred_ = true;
    return true;
  }

  // What flush_deferred() would hand its writer now: the backlog, or
  // nothing when it would not write (nothing deferred, or a write armed).
  // So a batch can send it first (send_batch) and flush_deferred() then
  // take the socket's answer.
  [[nodiscard]] std::span<const std::uint8_t> deferred_write() const noexcept {
    if (!deferred_ || writing_) return {};
    return {backlog_.data() + head_, queued_bytes()};
  }

  // The end of the turn in which defer() returned true.
  template <class Writer>
  next flush_deferred(buffer_pool& pool, Writer&& write) {
    if (!deferred_) return next::nothing;
    deferred_ = false;
    if (writing_) return next::nothing;  // an armed write drains the backlog anyway
    return write_backlog(pool, write);
  }

  // The armed wait completed: the socket is writable.
  template <class Writer>
  next on_writable(buffer_pool& pool, Writer&& write) {
    writing_ = false;
    return write_backlog(pool, write);
  }

  // Gives the backlog buffer back (connection teardown).
  void release(buffer_pool& pool);

 private:
  void append(std::span<const std::uint8_t> bytes, buffer_pool& pool);

  next arm_write() noexcept {
    if (writing_) return next::nothing;
    writing_ = true;
    return next::wait_writable;
  }

  template <class Writer>
  next write_backlog(buffer_pool& pool, Writer& write) {
    const write_result r = write(std::span<const std::uint8_t>(backlog_.data() + head_, queued_bytes()));
    if (r.what == write_result::status::failed) return next::failed;
    const std::size_t head = head_ + (r.what == write_result::status::written ? r.bytes : 0);
    if (head < backlog_.size()) {
      // Compact now and then, not on every partial write; and before the
      // offset outgrows its 32 bits (a backlog past 4 GiB: one huge frame,
      // or a --max-send-queue that large).
      if (head > backlog_.size() / 2 || head > max_head) {
        backlog_.consume(head);
        head_ = 0;
      } else {
        head_ = static_cast<std::uint32_t>(head);
      }
      return arm_write();
    }
    release(pool);
    return next::drained;
  }

  // 32 bits, so that the queue fits 32 bytes of every connection's session.
  static constexpr std::size_t max_head = std::numeric_limits<std::uint32_t>::max();

  byte_buffer backlog_;     // borrowed from the pool while it holds bytes
  std::uint32_t head_ = 0;  // backlog_ bytes before it are written
  bool writing_ = false;    // a wait for writability is armed
  bool deferred_ = false;   // backlog_ holds bytes no write is armed for yet (see defer)
};

}  // namespace fg::gateway
