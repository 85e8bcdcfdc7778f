#include "gateway/routing/room_hub.hpp"

#include <algorithm>

namespace fg::gateway {

void room_hub::subscribe(link_port& link, const std::string& room) {
  auto& links = members_[room];
  if (std::find(links.begin(), links.end(), &link) == links.end()) links.push_back(&link);
}

void room_hub::unsubscribe(link_port& link, const std::string& room) {
  const auto it = members_.find(room);
  if (it == members_.end()) return;
  std::erase(it->second, &link);
  if (it->second.empty()) members_.erase(it);
}

void room_hub::publish(const framegate::link::BrokerPublish& p) {
  const auto it = members_.find(p.room());
  if (it == members_.end()) return;
  *deliver_.mutable_broker_deliver() = p;
  for (link_port* link : it->second) link->send(deliver_);
}

void room_hub::forget(link_port& link) {
  for (auto it = members_.begin(); it != members_.end();) {
    std::erase(it->second, &link);
    it = it->second.empty() ? members_.erase(it) : std::next(it);
  }
}

}  // namespace fg::gateway
