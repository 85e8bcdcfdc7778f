// The worker's /metrics: every framegate_worker_* family of
// docs/METRICS.md, plus the process's own. Runs on the worker's loop.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "worker/metrics/worker_stats.hpp"
#include "worker/runtime/dispatcher.hpp"

namespace fg::worker {

struct worker_view {
  const std::string& id;  // --id
  const dispatcher_stats& core;
  const std::vector<app_stats>& apps;
  std::size_t connections;  // served now
  std::size_t links_up;     // links to gateway threads that are up
  broker_report broker;
  std::uint64_t link_write_waits = 0;  // worker_runtime::link_write_waits
};

std::string render_worker_metrics(const worker_view& w);

}  // namespace fg::worker
