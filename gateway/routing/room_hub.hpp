// Rooms across the workers of one gateway: workers subscribe their link on
// thread 0 to the rooms they have local members in, and a publish is
// relayed to every subscribed worker, the publisher's included, once each.
// (The Redis broker replaces this hub when rooms must span gateways.)
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "gateway/routing/worker_link.hpp"

namespace fg::gateway {

class room_hub {
 public:
  void subscribe(worker_link& link, const std::string& room);
  void unsubscribe(worker_link& link, const std::string& room);
  void publish(const framegate::link::BrokerPublish& p);
  void forget(worker_link& link);
  [[nodiscard]] std::size_t rooms() const noexcept { return members_.size(); }

 private:
  std::unordered_map<std::string, std::vector<worker_link*>> members_;
  framegate::link::Envelope deliver_;  // reused
};

}  // namespace fg::gateway
