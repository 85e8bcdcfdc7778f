#include "worker/config.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "common/cli_parse.hpp"

#include "common/option_values.hpp"
#include "common/secret_file.hpp"
#include "common/version.hpp"
#include "worker/apps/builtin.hpp"

namespace fg::worker {

namespace {

// Throws std::invalid_argument naming the first path no built-in app serves.
void check_apps(const std::vector<std::string>& apps, bool enable_test_apps) {
  for (const auto& path : apps) {
    const bool test_app = path == slow_app_path || path == whoami_app_path;
    if (test_app && !enable_test_apps)
      throw std::invalid_argument("--apps: " + path + " is a test app: add --enable-test-apps");
    if (!is_builtin_app(path) && !test_app)
      throw std::invalid_argument("--apps: no built-in app at '" + path + "' (known: " + builtin_app_list() + ")");
  }
}

}  // namespace

worker_config parse_worker_config(int argc, char** argv, const worker_program& program) {
  worker_config cfg;
  CLI::App app{program.name +
               ": runs the business logic (apps mounted by URL path) behind a framegate gateway.\n"
               "Every option can also be set by the environment variable shown beside it."};
  app.get_formatter()->column_width(44);

  std::string apps;
  unsigned slow_ms = 50;
  app.add_option(
         "--id", cfg.id,
         "Stable worker name; a restarted worker reuses it (default: <hostname>-<pid>, unique across containers)")
      ->envname("FRAMEGATE_ID");
  app.add_option("--link-dir", cfg.link_dir,
                 "Directory of the gateway's link-<i>.sock sockets; the worker links to each")
      ->envname("FRAMEGATE_LINK_DIR")
      ->capture_default_str();
  if (program.builtin_apps) {
    app.add_option(
           "--apps", apps,
           "Comma-separated URL paths of the built-in apps to mount (default: all of " + builtin_app_list() + ")")
        ->envname("FRAMEGATE_APPS");
    app.add_flag("--enable-test-apps", cfg.enable_test_apps,
                 "Also mount the test apps /slow (sleeps, then echoes) and /whoami (tells which worker serves you)")
        ->envname("FRAMEGATE_ENABLE_TEST_APPS");
    app.add_option("--slow-ms", slow_ms, "Milliseconds /slow blocks the worker per message")
        ->envname("FRAMEGATE_SLOW_MS")
        ->capture_default_str()
        ->check(CLI::Range(0u, 600000u));
  }
  app.add_option("--max-envelope", cfg.link.max_envelope,
                 "Largest link envelope accepted from the gateway, in bytes; keep it above the gateway's "
                 "--max-message-size (a larger envelope closes the link)")
      ->envname("FRAMEGATE_MAX_ENVELOPE")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{64 * 1024}, std::uint32_t{0xFFFFFFFF}));
  app.add_option("--link-sndbuf", cfg.link.sndbuf,
                 "SO_SNDBUF of each link socket in bytes, as the gateway's option of that name (0: kernel default)")
      ->envname("FRAMEGATE_LINK_SNDBUF")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  std::string redis_url;
  app.add_option("--redis", redis_url,
                 "Redis for rooms across workers and hosts: redis://[[user]:password@]host[:port][/db] or "
                 "unix:///path[?db=N]; unset: rooms span this gateway's workers only (the gateway is the hub)")
      ->envname("FRAMEGATE_REDIS");
  std::string redis_cluster;
  app.add_option(
         "--redis-cluster", redis_cluster,
         "A Redis Cluster (Redis 7 or later) for rooms, instead of --redis: seed nodes HOST:PORT[,HOST:PORT...] "
         "(or redis://[user@]host:port each); rooms use sharded pub/sub on the primary of their slot")
      ->envname("FRAMEGATE_REDIS_CLUSTER");
  std::string redis_password_file;
  app.add_option("--redis-password-file", redis_password_file,
                 "File holding the Redis password (one trailing newline ignored); keeps it out of ps and the "
                 "environment. The --redis URL then holds no password (redis://USER@host for an ACL user); with "
                 "--redis-cluster, the password of every node")
      ->envname("FRAMEGATE_REDIS_PASSWORD_FILE");
  app.add_option("--channel-prefix", cfg.channel_prefix,
                 "Prefix of the Redis channels (<prefix>room:<R>, on a Redis Cluster <prefix>{room:<R>}); "
                 "framegate clusters sharing one Redis need different ones")
      ->envname("FRAMEGATE_CHANNEL_PREFIX")
      ->capture_default_str();
  app.add_option("--redis-buffer", cfg.redis_buffer,
                 "Publishes kept while Redis is unreachable; beyond it the oldest are dropped (and counted)")
      ->envname("FRAMEGATE_REDIS_BUFFER")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}));
  std::string foreign = "drop";
  app.add_option("--redis-foreign", foreign,
                 "Room channel messages without the framegate header (another publisher, redis-cli): drop (and "
                 "count) or deliver; delivered ones are still checked for size and UTF-8")
      ->envname("FRAMEGATE_REDIS_FOREIGN")
      ->capture_default_str()
      ->check(CLI::IsMember({"drop", "deliver"}));
  std::string secret_file;
  app.add_option("--redis-secret-file", secret_file,
                 "File holding the cluster's shared secret: envelopes on Redis carry an HMAC-SHA256 with it, and "
                 "messages without a valid one are dropped (counted); every worker of the cluster needs the same")
      ->envname("FRAMEGATE_REDIS_SECRET_FILE");
  std::string admin = "127.0.0.1:9091";
  auto* admin_opt = app.add_option("--admin", admin,
                                   "Admin HTTP listener (/healthz, /readyz, /metrics), HOST:PORT (port 0: any free "
                                   "port; off: none)")
                        ->envname("FRAMEGATE_ADMIN")
                        ->capture_default_str();
  double resubscribe_wait = 5;
  app.add_option("--redis-resubscribe-wait", resubscribe_wait,
                 "Seconds buffered publishes wait after an outage for the earlier subscribers to be back "
                 "(then sent anyway; what they miss is counted)")
      ->envname("FRAMEGATE_REDIS_RESUBSCRIBE_WAIT")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600.0));
  double redis_timeout = 10;
  app.add_option("--redis-timeout", redis_timeout,
                 "Seconds a TCP connection to Redis may leave sent bytes unacknowledged, or keepalive probes "
                 "unanswered, before it is given up and made again (a partition sends no FIN; without this, "
                 "Linux retransmits for about 15 minutes)")
      ->envname("FRAMEGATE_REDIS_TIMEOUT")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--history-size", cfg.history_size,
                 "Messages each room keeps in Redis for clients that recover after a drop (join with \"since\"); "
                 "0 turns history and delivery offsets off")
      ->envname("FRAMEGATE_HISTORY_SIZE")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}));
  std::int64_t history_ttl = 300;
  app.add_option("--history-ttl", history_ttl,
                 "Seconds a room's history is kept after its last publish (then the room starts a new epoch)")
      ->envname("FRAMEGATE_HISTORY_TTL")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86'400}));
  double presence_ttl = 15;
  app.add_option("--presence-ttl", presence_ttl,
                 "Seconds a worker's share of room presence outlives its last refresh (refreshed every third of "
                 "it): how long a crashed worker's members stay listed")
      ->envname("FRAMEGATE_PRESENCE_TTL")
      ->capture_default_str()
      ->check(CLI::Range(0.3, 3600.0));
  double pool_shed_period = 10;
  app.add_option("--pool-shed-period", pool_shed_period,
                 "Seconds after which payload strings kept for reuse that sat unused all along are freed (after a "
                 "burst, memory goes back within two periods; 0: the pool keeps its largest size)")
      ->envname("FRAMEGATE_POOL_SHED_PERIOD")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86'400.0));
  auto* publish_deflate =
      app.add_flag("--publish-deflate", cfg.publish_deflate.enabled,
                   "Compress each room message once, here, and send the compression with it (through Redis, or "
                   "the gateway's hub without Redis): gateways then send it to members with permessage-deflate "
                   "instead of compressing the message again. With Redis, every worker on it must read such "
                   "messages (this version or later)")
          ->envname("FRAMEGATE_PUBLISH_DEFLATE");
  app.add_option("--publish-deflate-threshold", cfg.publish_deflate.threshold,
                 "Room messages of fewer bytes are not compressed here (set it to the gateways' --deflate-threshold)")
      ->envname("FRAMEGATE_PUBLISH_DEFLATE_THRESHOLD")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->needs(publish_deflate);
  app.add_option("--publish-deflate-level", cfg.publish_deflate.tuning.level,
                 "zlib compression level of --publish-deflate, 1 (fastest) to 9 (smallest)")
      ->envname("FRAMEGATE_PUBLISH_DEFLATE_LEVEL")
      ->capture_default_str()
      ->check(CLI::Range(1, 9))
      ->needs(publish_deflate);
  add_logging_options(app, cfg.logging);
  app.set_version_flag("--version", program.name + " (framegate " + std::string(fg::version) + ")");

  parse_or_exit(app, program.name.c_str(), [&] {
    app.parse(argc, argv);
    cfg.apps = split_list(apps);
    check_apps(cfg.apps, cfg.enable_test_apps);
    if (cfg.link_dir.empty()) throw std::invalid_argument("--link-dir: must not be empty");
    if (!redis_url.empty() && !redis_cluster.empty())
      throw std::invalid_argument("--redis and --redis-cluster: choose one");
    if (!redis_password_file.empty() && redis_url.empty() && redis_cluster.empty())
      throw std::invalid_argument("--redis-password-file: needs --redis or --redis-cluster");
    const std::optional<std::string> password =
        redis_password_file.empty() ? std::nullopt
                                    : std::optional(read_secret_file(redis_password_file, "--redis-password-file"));
    if (!redis_url.empty()) cfg.redis = password ? parse_redis_url(redis_url, *password) : parse_redis_url(redis_url);
    if (!redis_cluster.empty()) cfg.redis_cluster = parse_cluster_seeds(redis_cluster, password);
    if (!cfg.redis_cluster.empty() && cfg.channel_prefix.find_first_of("{}") != std::string::npos)
      throw std::invalid_argument("--channel-prefix: no '{' or '}' with --redis-cluster (rooms carry the hash tag)");
    if (!secret_file.empty()) cfg.redis_secret = read_secret_file(secret_file, "--redis-secret-file");
    cfg.redis_foreign = foreign == "deliver" ? foreign_policy::deliver : foreign_policy::drop;
    cfg.admin = parse_optional_host_port(admin, "--admin");
    cfg.admin_explicit = admin_opt->count() > 0;
  });

  if (cfg.id.empty()) {
    // In containers every worker may be pid 1: the hostname tells them apart.
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    cfg.id = std::string(host[0] != '\0' ? host : "w") + "-" + std::to_string(::getpid());
  }
  cfg.slow_delay = std::chrono::milliseconds(slow_ms);
  cfg.redis_resubscribe_wait = seconds_to_ms(resubscribe_wait);
  cfg.redis_timeout = seconds_to_ms(redis_timeout);
  cfg.history_ttl = std::chrono::seconds(history_ttl);
  cfg.presence_ttl = seconds_to_ms(presence_ttl);
  cfg.pool_shed_period = seconds_to_ms(pool_shed_period);
  return cfg;
}

}  // namespace fg::worker
