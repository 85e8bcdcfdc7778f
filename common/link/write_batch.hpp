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
// A batch lives in a block that others may keep after it is written:
// queued_block() is the block the next envelope goes into, and whoever
// holds a copy of its pointer keeps its bytes (the gateway's ledger of
// unacknowledged messages replays payloads from the link's own output
// instead of copying each one). A written block is reused only once nobody
// else holds it; a few are kept for that, so that in steady state no block
// is allocated and none of a batch's bytes move while the next one grows.
// Pure: the link owns the socket and decides when to write (once per loop
// turn, and again on completion). Not thread-safe: one link, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "common/byte_buffer.hpp"

namespace fg::link {

class write_batch {
 public:
  using block = std::shared_ptr<byte_buffer>;

  // Written blocks kept for reuse, at most this many and this much
  // capacity in all: a burst's big blocks are let go (their last holder
  // frees them), so that a link does not keep a burst's memory for good.
  static constexpr std::size_t kKeptBlocks = 4;
  static constexpr std::size_t kKeptBytes = std::size_t{4} << 20;

  // Where the next envelope goes: append exactly one encoded envelope to
  // the buffer returned (link::encode, link::encode_message).
  [[nodiscard]] byte_buffer& next_envelope() noexcept {
    ++queued_envelopes_;
    return *queued_;
  }
  // The block next_envelope() appends to. Bytes once appended never change;
  // they may move while the block grows, so keep offsets, not pointers.
  [[nodiscard]] const block& queued_block() const noexcept { return queued_; }

  // The bytes to write now, valid until complete_write() or clear(); empty
  // when a write is already in flight or nothing is queued.
  [[nodiscard]] std::span<const std::uint8_t> begin_write() {
    if (in_flight_ || queued_->empty()) return {};
    in_flight_ = std::exchange(queued_, fresh_block());
    queued_envelopes_ = 0;
    return in_flight_->span();
  }

  void complete_write() { retire(std::move(in_flight_)); }

  // Drops everything, the write in flight included (the link is gone).
  // Blocks others hold keep their bytes.
  void clear() {
    retire(std::move(in_flight_));
    if (!queued_->empty()) retire(std::exchange(queued_, fresh_block()));
    queued_envelopes_ = 0;
  }

  [[nodiscard]] bool writing() const noexcept { return in_flight_ != nullptr; }
  // Envelopes and bytes waiting for the next write.
  [[nodiscard]] std::uint32_t queued_envelopes() const noexcept { return queued_envelopes_; }
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return queued_->size(); }
  // Bytes not yet written: queued plus in flight.
  [[nodiscard]] std::size_t pending_bytes() const noexcept {
    return queued_->size() + (in_flight_ ? in_flight_->size() : 0);
  }

 private:
  // A kept block nobody else holds, emptied, or a new one.
  block fresh_block() {
    for (auto& kept : kept_) {
      if (kept.use_count() != 1) continue;
      block b = std::move(kept);
      kept = std::move(kept_.back());
      kept_.pop_back();
      b->clear();
      return b;
    }
    return std::make_shared<byte_buffer>();
  }

  // Blocks still held elsewhere wait in kept_ until they are free.
  void retire(block b) {
    if (!b || kept_.size() >= kKeptBlocks) return;
    std::size_t kept_bytes = b->capacity();
    for (const auto& kept : kept_) kept_bytes += kept->capacity();
    if (kept_bytes <= kKeptBytes) kept_.push_back(std::move(b));
  }

  block queued_ = std::make_shared<byte_buffer>();
  block in_flight_;  // null when no write is in flight
  std::vector<block> kept_;
  std::uint32_t queued_envelopes_ = 0;
};

}  // namespace fg::link
