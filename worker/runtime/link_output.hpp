// The seam between the worker's dispatch logic and its links: the
// dispatcher only ever queues envelopes on a link by index; the runtime
// batches them per loop turn and writes them (tests capture them instead).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "framegate/link.pb.h"
#include "worker/app.hpp"

namespace fg::worker {

class link_output {
 public:
  virtual ~link_output() = default;
  // Appends `e` to the batch of link `index`, written at the end of this
  // loop turn together with everything else queued on that link. Dropped
  // (and counted by the link) when the link is not up.
  virtual void queue(std::uint32_t index, const framegate::link::Envelope& e) = 0;
  // Queues Envelope{send} like queue(), encoded by hand (the hot path:
  // link::encode_send copies the payload once, builds no Envelope), with
  // the publisher's compression when `pre` has one.
  virtual void queue_send(std::uint32_t index, std::span<const std::uint64_t> to, bool binary, std::string_view payload,
                          deflated_segment pre) = 0;
};

// What a broker that uses the gateway as its hub (link 0) needs.
class hub_port {
 public:
  virtual ~hub_port() = default;
  // True while link 0 is registered (its Welcome arrived).
  [[nodiscard]] virtual bool hub_ready() const = 0;
  // Queues `e` on link 0 (see link_output::queue).
  virtual void send_to_hub(const framegate::link::Envelope& e) = 0;
  // Runs `fn` once at the end of this loop turn, before the links flush,
  // so what it queues still leaves in this turn's writes.
  virtual void at_end_of_turn(std::function<void()> fn) = 0;
};

// Link-0 events for such a broker, raised by the dispatcher.
class hub_listener {
 public:
  virtual ~hub_listener() = default;
  virtual void on_hub_up() = 0;    // link 0 registered (again): resubscribe
  virtual void on_hub_down() = 0;  // link 0 lost: the hub forgot our subscriptions
  // `pre`: the publisher's compression, as BrokerPublish carried it (none: empty).
  virtual void on_hub_deliver(std::string_view room, std::string_view payload, deflated_segment pre) = 0;
};

}  // namespace fg::worker
