// The worker SDK's entry point: a worker of your own is your own main().
//
//   #include <framegate/worker/run.hpp>
//
//   int main(int argc, char** argv) {
//     fg::worker::app_registry apps;
//     apps.mount("/hello", std::make_unique<hello_app>());
//     return fg::worker::run(argc, argv, apps);
//   }
//
// run() takes the same options and FRAMEGATE_* environment as
// framegate-worker (but --apps, --enable-test-apps and --slow-ms, which
// choose among its built-in apps), links to the gateway, serves the apps
// until SIGINT or SIGTERM, and returns the exit code. What is stable is
// listed in docs/SDK.md.
#pragma once

#include "worker/app.hpp"
#include "worker/runtime/app_registry.hpp"

// The SDK's API version: the major changes when code written against the
// previous one may no longer compile or behave the same; the minor when
// something is added. Compare with #if in code that needs a newer API.
#define FRAMEGATE_WORKER_API_VERSION_MAJOR 1
#define FRAMEGATE_WORKER_API_VERSION_MINOR 0

namespace fg::worker {

inline constexpr int api_version_major = FRAMEGATE_WORKER_API_VERSION_MAJOR;
inline constexpr int api_version_minor = FRAMEGATE_WORKER_API_VERSION_MINOR;

// Parses the command line (on --help or --version prints and exits 0, on a
// bad option prints one line to stderr and exits 2), then runs the worker
// with `apps` until SIGINT or SIGTERM. Returns 0 after a clean stop, 1 when
// start-up fails (the reason on stderr). `apps` must outlive the call.
int run(int argc, char** argv, app_registry& apps);

}  // namespace fg::worker
