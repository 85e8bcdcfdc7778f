// framegate-worker: the built-in apps (/echo, /rooms, /shout and the test
// apps) on the same runtime a worker built on the SDK uses (worker/run.hpp);
// only its command line is larger, to choose among them.
#include <cstdio>
#include <exception>

#include "worker/apps/builtin.hpp"
#include "worker/config.hpp"
#include "worker/runtime/worker_process.hpp"

int main(int argc, char** argv) {
  const auto config = fg::worker::parse_worker_config(argc, argv);
  fg::worker::app_registry apps;
  try {
    fg::worker::mount_builtin_apps(apps, {config.apps, config.enable_test_apps, config.slow_delay});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate-worker: %s\n", e.what());
    return 1;
  }
  return fg::worker::run_worker_process(config, apps, "framegate-worker");
}
