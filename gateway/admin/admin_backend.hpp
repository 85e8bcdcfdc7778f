// What the admin endpoints need from the I/O threads. The routing state
// and the counters live on the I/O threads, so every question is
// asynchronous: `done` is called later, on the admin thread.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "gateway/metrics/gateway_stats.hpp"
#include "gateway/routing/route_table.hpp"

namespace fg::gateway::admin {

// What became of a publish API request: refused as a whole (result), or
// sent, with each message's receipt from its worker.
struct publish_outcome {
  route_table::publish_result result = route_table::publish_result::no_worker;
  std::vector<api_receipt> receipts;  // sent: one per message, in order
};

class admin_backend {
 public:
  virtual ~admin_backend() = default;

  // How many workers are registered; SIZE_MAX when the gateway needs none
  // (--echo).
  virtual void count_workers(std::function<void(std::size_t)> done) = 0;
  // Hands the messages to the workers serving /rooms (all or nothing; see
  // route_table::publish_to_rooms).
  virtual void publish(std::vector<room_message> messages, std::function<void(publish_outcome)> done) = 0;
  // A snapshot of every I/O thread's counters (taken on each thread).
  virtual void collect(std::function<void(std::vector<thread_snapshot>)> done) = 0;
};

}  // namespace fg::gateway::admin
