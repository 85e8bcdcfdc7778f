#include "worker/run.hpp"

#include <string>

#include "worker/config.hpp"
#include "worker/runtime/worker_process.hpp"

namespace fg::worker {

namespace {

// "/opt/app/bin/hello-worker" -> "hello-worker": the name the user knows.
std::string program_name(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr || argv[0][0] == '\0') return "framegate-worker";
  const std::string path(argv[0]);
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int run(int argc, char** argv, app_registry& apps) {
  const worker_program program{program_name(argc, argv), false};
  const auto config = parse_worker_config(argc, argv, program);
  return run_worker_process(config, apps, program.name.c_str());
}

}  // namespace fg::worker
