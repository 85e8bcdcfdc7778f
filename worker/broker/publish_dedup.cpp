#include "worker/broker/publish_dedup.hpp"

#include <utility>

namespace fg::worker {

bool publish_dedup::seen_seqs::contains(std::uint64_t seq) const noexcept {
  // Seqs mostly grow: a new one is above all remembered, no scan.
  if (seq > max) return false;
  for (const std::uint64_t s : ring)
    if (s == seq) return true;
  return false;
}

bool publish_dedup::seen_seqs::below_full_window(std::uint64_t seq) const noexcept {
  if (ring.size() < window || seq > max) return false;
  for (const std::uint64_t s : ring)
    if (s <= seq) return false;
  return true;
}

void publish_dedup::seen_seqs::add(std::uint64_t seq) {
  if (seq > max) max = seq;
  if (ring.size() < window) {
    ring.push_back(seq);
    return;
  }
  ring[next] = seq;
  next = (next + 1) % window;
}

bool publish_dedup::accept(std::uint64_t origin, std::string_view room, std::uint64_t seq, bool authenticated) {
  auto room_it = seen_.find(room);
  if (room_it != seen_.end())
    if (const auto it = room_it->second.find(origin); it != room_it->second.end()) {
      if (it->second.contains(seq) || (authenticated && it->second.below_full_window(seq))) return false;
      it->second.add(seq);
      return true;
    }
  // A new pair.
  if (pairs_ >= max_pairs) {
    seen_.clear();
    pairs_ = 0;
    room_it = seen_.end();
  }
  if (room_it == seen_.end()) room_it = seen_.emplace(std::string(room), by_origin{}).first;
  room_it->second[origin].add(seq);
  ++pairs_;
  return true;
}

void publish_dedup::forget_room(std::string_view room) {
  const auto it = seen_.find(room);
  if (it == seen_.end()) return;
  pairs_ -= it->second.size();
  seen_.erase(it);
}

void publish_dedup::owe(publish_record_ptr r) {
  r->owed_local = true;
  echo_wait_.push_back(std::move(r));
}

std::vector<publish_record_ptr> publish_dedup::settle(std::uint64_t seq) {
  std::vector<publish_record_ptr> passed;
  while (!echo_wait_.empty() && echo_wait_.front()->seq <= seq) {
    publish_record_ptr r = std::move(echo_wait_.front());
    echo_wait_.pop_front();
    if (r->seq < seq && r->owed_local)
      passed.push_back(std::move(r));
    else
      r->owed_local = false;  // its copy is the one that came back
  }
  return passed;
}

std::vector<publish_record_ptr> publish_dedup::take_owed() {
  std::vector<publish_record_ptr> owed;
  for (auto& r : echo_wait_)
    if (r->owed_local) owed.push_back(std::move(r));
  echo_wait_.clear();
  return owed;
}

void publish_dedup::delivered_locally(publish_record& r) {
  r.owed_local = false;
  self_delivered_.insert(r.seq);
  // Entries leave when their copy comes back, when a later copy shows they
  // never will, or when dropped; this catches any other path.
  while (self_delivered_.size() > local_bound_) self_delivered_.erase(self_delivered_.begin());
}

bool publish_dedup::own_copy_delivered(std::uint64_t seq) {
  self_delivered_.erase(self_delivered_.begin(), self_delivered_.lower_bound(seq));
  if (self_delivered_.empty() || *self_delivered_.begin() != seq) return false;
  self_delivered_.erase(self_delivered_.begin());
  return true;
}

}  // namespace fg::worker
