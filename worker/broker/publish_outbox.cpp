#include "worker/broker/publish_outbox.hpp"

#include <algorithm>
#include <utility>

namespace fg::worker {

publish_outbox::publish_outbox(std::size_t bound) : bound_(std::max<std::size_t>(bound, 1)) {}

std::vector<publish_record_ptr> publish_outbox::push(publish_record_ptr r) {
  queue_.push_back(std::move(r));
  std::vector<publish_record_ptr> dropped;
  while (queue_.size() > bound_ && written_ < queue_.size()) {
    // The oldest not yet written: the ones written may already be published.
    const auto at = queue_.begin() + static_cast<std::ptrdiff_t>(written_);
    dropped.push_back(std::move(*at));
    queue_.erase(at);
  }
  return dropped;
}

void publish_outbox::mark_written(std::chrono::steady_clock::time_point now) {
  queue_[written_]->written = now;
  ++written_;
}

publish_record_ptr publish_outbox::acknowledge() {
  if (written_ == 0 || queue_.empty()) return nullptr;
  publish_record_ptr done = std::move(queue_.front());
  queue_.pop_front();
  --written_;
  return done;
}

std::vector<publish_record_ptr> publish_outbox::take_unwritten() {
  std::vector<publish_record_ptr> taken(queue_.begin() + static_cast<std::ptrdiff_t>(written_), queue_.end());
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(written_), queue_.end());
  return taken;
}

std::size_t publish_outbox::clear() {
  const std::size_t never = unwritten();
  queue_.clear();
  written_ = 0;
  return never;
}

}  // namespace fg::worker
