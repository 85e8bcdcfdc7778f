#include "worker/broker/flush_gate.hpp"

#include <algorithm>
#include <unordered_set>

namespace fg::worker {

void flush_gate::begin(clock::time_point now, std::chrono::milliseconds settle, std::chrono::milliseconds wait) {
  holding_ = true;
  asking_ = false;
  ++generation_;
  settle_until_ = now + settle;
  deadline_ = now + std::max(wait, settle);
}

void flush_gate::cancel() {
  holding_ = false;
  asking_ = false;
  ++generation_;
}

flush_gate::step flush_gate::check(clock::time_point now, const publish_outbox& outbox, bool self_subscribed) {
  if (!holding_ || asking_) return {};
  if (outbox.unwritten() == 0) return {action::open, {}};  // nothing buffered: nobody can miss anything
  if (now >= deadline_) return {action::open_late, {}};
  if (!self_subscribed) return {action::poll, {}};

  // The distinct buffered rooms with a count from before the outage.
  step s{action::ask, {}};
  bool uncounted = false;
  std::unordered_set<std::string_view> seen;
  for (const auto& r : outbox.unwritten_records()) {
    if (s.rooms.size() >= max_asked_rooms) break;
    if (!seen.insert(r->room).second) continue;
    if (receivers_.contains(r->room))
      s.rooms.push_back(r->room);
    else
      uncounted = true;
  }
  uncounted_ = uncounted;
  if (s.rooms.empty()) return {uncounted && now < settle_until_ ? action::poll : action::open, {}};
  return s;
}

bool flush_gate::back(std::string_view room, long long n) const {
  const auto it = receivers_.find(room);
  return it == receivers_.end() || n >= it->second;
}

flush_gate::action flush_gate::answered(bool all_back, clock::time_point now) {
  asking_ = false;
  return all_back && (!uncounted_ || now >= settle_until_) ? action::open : action::poll;
}

void flush_gate::open(publish_outbox& outbox) {
  holding_ = false;
  // What the buffered publishes should reach: the subscribers before the outage.
  for (const auto& r : outbox.unwritten_records()) r->expect = receivers(r->room);
}

void flush_gate::note_receivers(std::string_view room, long long n) {
  const auto it = receivers_.find(room);
  if (it != receivers_.end()) {
    it->second = n;
    return;
  }
  if (receivers_.size() >= max_counted_rooms) receivers_.clear();
  receivers_.emplace(room, n);
}

long long flush_gate::receivers(std::string_view room) const {
  const auto it = receivers_.find(room);
  return it == receivers_.end() ? -1 : it->second;
}

}  // namespace fg::worker
