// The gateway's /metrics: sums the threads' snapshots and writes every
// framegate_gateway_* family of docs/METRICS.md, plus the process's own.
#pragma once

#include <span>
#include <string>

#include "gateway/metrics/gateway_stats.hpp"

namespace fg::gateway {

std::string render_gateway_metrics(std::span<const thread_snapshot> threads, const admin_counters& admin);

}  // namespace fg::gateway
