// Every worker option in one struct. Filled from the command line and
// FRAMEGATE_* environment variables (parse_worker_config).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.hpp"
#include "common/link/codec.hpp"
#include "common/link/link_dir_trust.hpp"
#include "common/link/link_socket.hpp"
#include "common/logging.hpp"
#include "worker/broker/inbound_check.hpp"
#include "worker/broker/publish_compressor.hpp"
#include "worker/broker/redis_url.hpp"

namespace fg::worker {

// How a worker keeps its links to the gateway up.
struct link_options {
  std::chrono::milliseconds backoff_min{50};  // first reconnect delay, doubled per failure
  std::chrono::milliseconds backoff_max{2000};
  std::chrono::milliseconds welcome_timeout{5000};  // Register sent, no Welcome: reconnect
  std::uint32_t max_envelope = link::default_max_envelope;
  // Output queued on one link beyond which the worker stops reading that
  // link until the gateway has taken the backlog (backpressure, not growth).
  std::size_t output_high_water = 16u * 1024 * 1024;
  int sndbuf = link::default_link_sndbuf;  // SO_SNDBUF of each link socket (0: kernel default)
};

struct worker_config {
  std::string id;                                   // default: "w<pid>"
  std::string link_dir = link::default_link_dir();  // as the gateway's
  std::vector<std::string> apps;                    // paths to mount; empty: every built-in app
  bool enable_test_apps = false;                    // also mount /slow
  std::chrono::milliseconds slow_delay{50};         // what /slow sleeps per message
  logging_options logging;
  link_options link{};
  // The broker: Redis when set (--redis), otherwise the gateway hub (one
  // gateway's workers only).
  std::optional<redis_endpoint> redis;
  // Or a Redis Cluster (--redis-cluster): its seed nodes; rooms then use
  // sharded pub/sub on the primary of each room's slot.
  std::vector<redis_endpoint> redis_cluster;
  std::string channel_prefix = "framegate:";  // Redis channels: <prefix>room:<R> (a cluster: <prefix>{room:<R>})
  std::size_t redis_buffer = 10000;           // publishes kept while Redis is unreachable
  // Admin HTTP listener (/healthz, /readyz, /metrics); nullopt: "off".
  // `admin_explicit`: set by flag or environment, so failing to bind it is
  // fatal; the default address only warns (another worker may hold it).
  std::optional<host_port> admin = host_port{"127.0.0.1", 9091};
  bool admin_explicit = false;
  // Messages without the framegate header on a room channel (--redis-foreign).
  foreign_policy redis_foreign = foreign_policy::drop;
  // The cluster's shared secret for authenticated envelopes (read from
  // --redis-secret-file); empty: none.
  std::string redis_secret;
  // After an outage, how long buffered publishes wait for the earlier subscribers to be back.
  std::chrono::milliseconds redis_resubscribe_wait{5000};
  // A TCP connection to Redis silent this long is given up (--redis-timeout).
  std::chrono::milliseconds redis_timeout{10000};
  // Room history with Redis (--history-size, --history-ttl): messages kept
  // per room for recovery; 0 turns history (and offsets) off.
  std::size_t history_size = 100;
  std::chrono::seconds history_ttl{300};
  // How long a worker's presence share outlives its last refresh (--presence-ttl).
  std::chrono::milliseconds presence_ttl{15000};
  // Compress room messages once here, for every gateway (--publish-deflate,
  // --publish-deflate-threshold, --publish-deflate-level).
  publish_compression publish_deflate{};
  // The payload strings kept for reuse that sat unused for a whole period
  // are freed (--pool-shed-period; 0: never).
  std::chrono::milliseconds pool_shed_period{10000};
};

// Which command line: framegate-worker's own (with --apps, --enable-test-apps
// and --slow-ms, which choose among the built-in apps) or that of a worker
// built on the SDK (fg::worker::run), which mounts its own apps.
struct worker_program {
  std::string name = "framegate-worker";  // in --help and error lines
  bool builtin_apps = true;
};

// Parses argv (and the environment). On --help prints usage and exits 0;
// on a bad option prints one line to stderr and exits 2.
worker_config parse_worker_config(int argc, char** argv, const worker_program& program = {});

}  // namespace fg::worker
