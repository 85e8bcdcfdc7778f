#include "gateway/routing/unacked_ledger.hpp"

namespace fg::gateway {

std::uint64_t unacked_ledger::record(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
  const std::uint64_t seq = next_seq_++;
  entries_.push_back(entry{seq, conn_id, payloads_.size(), static_cast<std::uint32_t>(payload.size()), binary});
  payloads_.append(payload);
  return seq;
}

void unacked_ledger::acknowledge(std::uint64_t seq) {
  while (!entries_.empty() && entries_.front().seq <= seq) {
    head_ = entries_.front().offset + entries_.front().size;
    entries_.pop_front();
  }
  if (entries_.empty()) {
    payloads_.clear();
    head_ = 0;
  } else if (head_ > payloads_.size() / 2) {
    // Compact now and then so a link that is never fully acknowledged
    // does not grow forever.
    payloads_.consume(head_);
    for (auto& e : entries_) e.offset -= head_;
    head_ = 0;
  }
}

}  // namespace fg::gateway
