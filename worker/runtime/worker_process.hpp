// A whole worker process around mounted apps: the gateway links, the
// broker (Redis or the gateway hub), the admin listener, signals, and the
// exit report. framegate-worker and every worker built on the SDK
// (fg::worker::run) run through here, so they behave alike.
#pragma once

#include "worker/config.hpp"
#include "worker/runtime/app_registry.hpp"

namespace fg::worker {

// Runs until SIGINT or SIGTERM; returns the process exit code (0 on a
// clean stop, 1 when start-up fails, with the reason on stderr).
int run_worker_process(const worker_config& config, app_registry& apps, const char* program);

}  // namespace fg::worker
