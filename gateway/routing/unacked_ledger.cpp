#include "gateway/routing/unacked_ledger.hpp"

namespace fg::gateway {

std::uint64_t unacked_ledger::record(std::uint64_t conn_id, bool binary, std::size_t size, const stored_payload& at) {
  const std::uint64_t seq = next_seq_++;
  // One hold per block, not per message: no reference count moves in the common case.
  if (blocks_.empty() || blocks_.back().block.get() != at.block.get())
    blocks_.push_back(held_block{at.block, seq});
  else
    blocks_.back().last_seq = seq;
  entries_.push_back(entry{seq, conn_id, at.block.get(), at.offset, static_cast<std::uint32_t>(size), binary});
  bytes_ += size;
  return seq;
}

void unacked_ledger::acknowledge(std::uint64_t seq) {
  while (!entries_.empty() && entries_.front().seq <= seq) {
    bytes_ -= entries_.front().size;
    entries_.pop_front();
  }
  while (!blocks_.empty() && blocks_.front().last_seq <= seq) blocks_.pop_front();
}

std::size_t unacked_ledger::held_bytes() const noexcept {
  std::size_t held = 0;
  for (const auto& b : blocks_) held += b.block->capacity();
  return held;
}

}  // namespace fg::gateway
