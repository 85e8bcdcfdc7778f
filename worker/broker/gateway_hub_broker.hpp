// Rooms across the workers of one gateway, with the gateway as the hub.
//
// subscribe/unsubscribe change the set of rooms this worker wants; the
// changes of one loop turn go to the gateway as one BrokerSubscribe on
// link 0 (only the net difference: a join and a leave of the same room in
// one turn send nothing). publish sends BrokerPublish on link 0, after any
// pending subscription change so that a client that joins and publishes
// in one batch hears itself. The gateway relays each publish as
// broker_deliver to every worker subscribed to the room, this one included,
// once each; deliveries go to the `deliver` callback (the runtime's apps).
//
// With --publish-deflate a publish carries its compression, made once here
// (publish_compressor.hpp), so that the gateway does not compress it again
// for each worker's Send.
//
// Link 0 lost: the hub forgot us; on its next Welcome the whole wanted set
// is subscribed again. Publishes while link 0 is down are dropped and
// counted (the rooms protocol has no delivery guarantee across failures).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "framegate/link.pb.h"
#include "worker/app.hpp"
#include "worker/broker/publish_compressor.hpp"
#include "worker/metrics/worker_stats.hpp"
#include "worker/runtime/link_output.hpp"

namespace fg::worker {

struct hub_broker_stats {
  std::uint64_t publishes = 0;
  std::uint64_t publishes_dropped = 0;  // link 0 was down
  std::uint64_t deliveries = 0;
  std::uint64_t deflated_publishes = 0;   // sent with their compression (--publish-deflate)
  std::uint64_t deflated_deliveries = 0;  // handed to the apps with their publisher's compression
  std::uint64_t subscribe_envelopes = 0;
  std::uint64_t history_requests = 0;  // all answered "off"
};

class gateway_hub_broker final : public broker, public hub_listener {
 public:
  // Hub deliveries are not numbered (no history without Redis); they carry
  // their publisher's compression, if it made one.
  using deliver_fn =
      std::function<void(std::string_view room, std::string_view payload, room_position at, deflated_segment pre)>;

  gateway_hub_broker(hub_port& port, deliver_fn deliver, const publish_compression& compression = {})
      : port_(port), deliver_(std::move(deliver)), compressor_(compression) {}

  // broker
  void subscribe(std::string_view room) override;
  void unsubscribe(std::string_view room) override;
  void publish(std::string_view room, std::string_view payload) override;
  // The receipt says whether link 0 took it (no numbering without Redis).
  void publish(std::string_view room, std::string_view payload, publish_options options) override;
  // No history through the hub: answered at once, counted as "off".
  void history(std::string_view room, const std::optional<history_since>& since,
               std::function<void(room_history)> done) override;

  // hub_listener
  void on_hub_up() override;
  void on_hub_down() override;
  void on_hub_deliver(std::string_view room, std::string_view payload, deflated_segment pre) override;

  [[nodiscard]] bool wants(std::string_view room) const { return wanted_.contains(std::string(room)); }
  [[nodiscard]] std::size_t wanted_count() const noexcept { return wanted_.size(); }
  [[nodiscard]] const hub_broker_stats& stats() const noexcept { return stats_; }
  // For /metrics and /readyz.
  [[nodiscard]] broker_report report() const;

 private:
  // Sends BrokerPublish (or counts it dropped), with the compression of
  // the payload's first `stable_prefix` bytes when it is worth one.
  void send_publish(std::string_view room, std::string_view payload, std::size_t stable_prefix);
  void touch(std::string_view room);
  // Sends the net subscription change since the last one (if any).
  void flush_changes();

  hub_port& port_;
  deliver_fn deliver_;
  publish_compressor compressor_;
  std::unordered_set<std::string> wanted_;     // rooms this worker has local members in
  std::unordered_set<std::string> announced_;  // what the hub has been told
  std::vector<std::string> touched_;           // rooms changed since the last flush
  bool flush_pending_ = false;
  hub_broker_stats stats_;
  framegate::link::Envelope subscribe_env_, publish_env_;
};

}  // namespace fg::worker
