#include "gateway/routing/unacked_ledger.hpp"

#include <algorithm>

namespace fg::gateway {

std::uint64_t unacked_ledger::record(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload) {
  const std::uint64_t seq = next_seq_++;
  const std::uint8_t* stored = store(payload);
  entries_.push_back(entry{seq, conn_id, stored, first_segment_ + segments_.size() - 1,
                           static_cast<std::uint32_t>(payload.size()), binary});
  bytes_ += payload.size();
  return seq;
}

const std::uint8_t* unacked_ledger::store(std::span<const std::uint8_t> payload) {
  if (segments_.empty() || segments_.back().capacity() - segments_.back().size() < payload.size()) {
    byte_buffer next;
    if (payload.size() <= spare_.capacity()) next = std::move(spare_);
    next.reserve(std::max(segment_bytes, payload.size()));
    segments_.push_back(std::move(next));
  }
  byte_buffer& segment = segments_.back();
  const std::uint8_t* at = segment.data() + segment.size();
  segment.append(payload);  // within its capacity: nothing moves
  return at;
}

void unacked_ledger::acknowledge(std::uint64_t seq) {
  while (!entries_.empty() && entries_.front().seq <= seq) {
    bytes_ -= entries_.front().size;
    entries_.pop_front();
  }
  release_segments();
}

void unacked_ledger::release_segments() {
  // With nothing outstanding, an ordinary last segment is emptied and kept.
  const bool keep_last = entries_.empty() && !segments_.empty() && segments_.back().capacity() == segment_bytes;
  const std::uint64_t keep_from = !entries_.empty() ? entries_.front().segment
                                  : keep_last       ? first_segment_ + segments_.size() - 1
                                                    : first_segment_ + segments_.size();
  while (first_segment_ < keep_from) {
    byte_buffer freed = std::move(segments_.front());
    segments_.pop_front();
    ++first_segment_;
    // Only an ordinary segment is kept: a large message's is given back.
    if (freed.capacity() == segment_bytes && spare_.capacity() == 0) {
      freed.clear();
      spare_ = std::move(freed);
    }
  }
  if (keep_last) segments_.back().clear();
}

std::size_t unacked_ledger::held_bytes() const noexcept {
  std::size_t held = spare_.capacity();
  for (const auto& segment : segments_) held += segment.capacity();
  return held;
}

}  // namespace fg::gateway
