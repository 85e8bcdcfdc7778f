// Rooms across the workers of one gateway: workers subscribe their link on
// thread 0 to the rooms they have local members in, and a publish is
// relayed to every subscribed worker, the publisher's included, once each.
// (The Redis broker replaces this hub when rooms must span gateways.)
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "common/shrink_buckets.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway {

class room_hub {
 public:
  void subscribe(link_port& link, const std::string& room);
  void unsubscribe(link_port& link, const std::string& room);
  void publish(const framegate::link::BrokerPublish& p);
  void forget(link_port& link);
  [[nodiscard]] std::size_t rooms() const noexcept { return members_.size(); }
  // The room table's buckets, once most of its rooms are gone; the bytes freed.
  std::size_t shed_unused() { return shrink_buckets(members_); }

 private:
  std::unordered_map<std::string, std::vector<link_port*>> members_;
  framegate::link::Envelope deliver_;  // reused
};

}  // namespace fg::gateway
