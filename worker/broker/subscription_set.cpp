#include "worker/broker/subscription_set.hpp"

#include <utility>

namespace fg::worker {

bool subscription_set::want(std::string_view room) {
  if (!wanted_.emplace(room).second) return false;
  touched_.emplace_back(room);
  return true;
}

bool subscription_set::unwant(std::string_view room) {
  const auto it = wanted_.find(room);
  if (it == wanted_.end()) return false;
  wanted_.erase(it);
  touched_.emplace_back(room);
  return true;
}

subscription_set::changes subscription_set::take_changes() {
  changes c;
  for (std::string& room : touched_) {
    const bool want = wanted_.contains(room);
    const bool told = announced_.contains(room);
    if (want && !told) {
      announced_.insert(room);
      c.subscribe.push_back(std::move(room));
    } else if (!want && told) {
      announced_.erase(room);
      c.unsubscribe.push_back(std::move(room));
    }
  }
  touched_.clear();
  return c;
}

std::vector<std::string> subscription_set::reconnect() {
  connection_lost();
  touched_.clear();
  return {wanted_.begin(), wanted_.end()};
}

void subscription_set::resubscribing(const std::vector<std::string>& rooms) {
  announced_.insert(rooms.begin(), rooms.end());
  resub_pending_ = rooms.size();
}

void subscription_set::connection_lost() {
  announced_.clear();
  pending_.clear();
  resub_pending_ = 0;
}

void subscription_set::sent(const std::vector<std::string>& rooms) {
  for (const auto& room : rooms) ++pending_[room];
}

bool subscription_set::answered(std::string_view room, bool subscribe) {
  if (const auto it = pending_.find(room); it != pending_.end() && --it->second == 0) pending_.erase(it);
  return subscribe && resub_pending_ > 0 && --resub_pending_ == 0;
}

}  // namespace fg::worker
