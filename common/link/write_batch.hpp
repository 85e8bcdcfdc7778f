// The output side of one link: envelopes queued during a loop turn leave
// together in one write, and only one write is ever in flight.
//
//   next_envelope()   append one encoded envelope to the queued batch
//   begin_write()     the queued batch becomes the write in flight; its
//                     bytes, or nothing while a write is in flight or
//                     nothing is queued
//   complete_write()  the write in flight is done (or failed): envelopes
//                     queued meanwhile are the next batch
//
// Two buffers swap roles, so neither reallocates once both have grown to
// a turn's worth of output, and the bytes of the write in flight never
// move while the next batch grows. Pure: the link owns the socket and
// decides when to write (once per loop turn, and again on completion).
// Not thread-safe: one link, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "common/byte_buffer.hpp"

namespace fg::link {

class write_batch {
 public:
  // Where the next envelope goes: append exactly one encoded envelope to
  // the buffer returned (link::encode, link::encode_message).
  [[nodiscard]] byte_buffer& next_envelope() noexcept {
    ++queued_envelopes_;
    return queued_;
  }

  // The bytes to write now, valid until complete_write() or clear(); empty
  // when a write is already in flight or nothing is queued.
  [[nodiscard]] std::span<const std::uint8_t> begin_write() noexcept {
    if (writing_ || queued_.empty()) return {};
    std::swap(queued_, in_flight_);
    queued_envelopes_ = 0;
    writing_ = true;
    return in_flight_.span();
  }

  void complete_write() noexcept {
    in_flight_.clear();
    writing_ = false;
  }

  // Drops everything, the write in flight included (the link is gone).
  void clear() noexcept {
    queued_.clear();
    in_flight_.clear();
    queued_envelopes_ = 0;
    writing_ = false;
  }

  [[nodiscard]] bool writing() const noexcept { return writing_; }
  // Envelopes and bytes waiting for the next write.
  [[nodiscard]] std::uint32_t queued_envelopes() const noexcept { return queued_envelopes_; }
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return queued_.size(); }
  // Bytes not yet written: queued plus in flight.
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return queued_.size() + in_flight_.size(); }

 private:
  byte_buffer queued_;
  byte_buffer in_flight_;
  std::uint32_t queued_envelopes_ = 0;
  bool writing_ = false;
};

}  // namespace fg::link
