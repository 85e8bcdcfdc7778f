// A broker the worker process runs: started before the links, stopped at
// exit (counting what it could not send), reported on in /metrics and
// /readyz. One Redis (redis_broker) or a Redis Cluster (redis_cluster_broker).
#pragma once

#include "worker/app.hpp"
#include "worker/metrics/worker_stats.hpp"

namespace fg::worker {

class running_broker : public broker {
 public:
  virtual void start() = 0;
  virtual void stop() = 0;
  [[nodiscard]] virtual broker_report report() const = 0;
};

}  // namespace fg::worker
