// Everything `framegate up` is told: its own options (flags, FRAMEGATE_*
// environment variables, --config file, in that order of precedence) and the
// options it passes through to the children.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "common/logging.hpp"
#include "supervisor/passthrough.hpp"

namespace fg::supervisor {

struct supervisor_options {
  // The admin address of worker `index` (1-based) as an argument for --admin.
  [[nodiscard]] std::string worker_admin_for(unsigned index) const;

  std::string listen = "0.0.0.0:8080";
  unsigned workers = 0;  // resolved to the number of cores when not given
  // The gateway's I/O threads (--threads, FRAMEGATE_THREADS; 0: one per
  // core, the gateway's own default). Not given: half the cores, at least
  // one, since the workers and Redis run on the same host.
  unsigned gateway_threads = 0;
  bool gateway_threads_default = false;
  std::string link_dir;  // empty: a fresh private directory, removed at exit
  std::string config_file;
  bool print_config = false;
  double stop_timeout_s = 10;
  double start_timeout_s = 10;
  std::string gateway_bin;  // resolved to the directory of this executable when not given
  std::string worker_bin;
  logging_options logging;  // the children get it too
  // Worker i's admin listener is this port + i - 1 ("off": none; port 0:
  // each picks a free port). The gateway's is its own --admin (passed through).
  std::string worker_admin = "127.0.0.1:9091";

  // What the gateway serves to plain HTTP GETs (FRAMEGATE_STATIC_DIR):
  // --static-dir if given, else the bundled browser demo unless --no-demo.
  std::string static_dir;  // after parsing: the directory the gateway gets, empty for none
  bool no_demo = false;
  bool static_dir_given = false;

  // Redis for the workers' broker: `redis` given, they use it; otherwise
  // a private redis-server is started first (unless `no_redis`: rooms then
  // span only the workers of this gateway, through its hub).
  std::string redis;  // URL passed to the children as FRAMEGATE_REDIS
  // Or a Redis Cluster's seed nodes, passed as FRAMEGATE_REDIS_CLUSTER.
  std::string redis_cluster;
  // Passed on to the workers as FRAMEGATE_REDIS_PASSWORD_FILE (a file name,
  // never the password); needs `redis` or `redis_cluster`.
  std::string redis_password_file;
  bool no_redis = false;
  std::string redis_server_bin = "redis-server";  // a bare name is looked up in PATH

  [[nodiscard]] bool private_redis() const { return redis.empty() && redis_cluster.empty() && !no_redis; }

  // Unknown options, for both children as FRAMEGATE_<NAME>=value. A config
  // file entry whose variable the environment already sets keeps the
  // environment's value: the environment wins over the file.
  passthrough_map passthrough;
  // The entries of `passthrough` that were not given but implied by
  // others (supervisor/implied_options.hpp): --publish-deflate, and its
  // threshold and level, because of --deflate.
  std::set<std::string> implied;
  [[nodiscard]] bool publish_deflate_implied() const { return implied.contains("publish-deflate"); }

  std::chrono::milliseconds stop_timeout() const;
  std::chrono::milliseconds start_timeout() const;
};

// Parses the arguments after `up`. On --help prints usage and exits 0; on a
// bad option or config file prints one line to stderr and exits 2.
supervisor_options parse_up_options(const std::vector<std::string>& args);

// The `framegate up --help` text.
std::string up_help();

// The bundled demo (deploy/demo) for the executable in `bin_dir`: the source
// tree's (<bin>/../../deploy/demo, a build directory inside the repository),
// the installed one (<bin>/../share/framegate/demo), then the source tree
// this binary was built from. Empty if none holds an index.html.
std::string find_demo_dir(const std::string& bin_dir);

// `name = value` lines, loadable again with --config.
std::string format_effective_config(const supervisor_options& opts);

}  // namespace fg::supervisor
