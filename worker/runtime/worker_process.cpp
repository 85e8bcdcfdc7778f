#include "worker/runtime/worker_process.hpp"

#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <system_error>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "common/config_error.hpp"
#include "common/httpd/listener.hpp"
#include "common/logging.hpp"
#include "worker/admin/worker_routes.hpp"
#include "worker/broker/gateway_hub_broker.hpp"
#include "worker/broker/redis_broker.hpp"
#include "worker/broker/redis_cluster_broker.hpp"
#include "worker/metrics/worker_metrics.hpp"
#include "worker/runtime/worker_runtime.hpp"

namespace fg::worker {

namespace {

// At the default address a bind failure only warns (another worker on this
// machine may hold it); an address the operator chose must be honoured.
void start_admin(httpd::listener& admin, const worker_config& config) {
  if (!config.admin) return;
  auto log = component_logger("worker");
  try {
    admin.start(*config.admin);
    log->log(readiness_level(*log), "admin listening on {}:{}", config.admin->host, admin.port());
  } catch (const std::system_error& e) {
    if (config.admin_explicit) throw config_error(std::string(e.what()) + " (choose another --admin, or off)");
    log->warn("{}: admin listener disabled (set --admin)", e.what());
  }
}

}  // namespace

int run_worker_process(const worker_config& config, app_registry& apps, const char* program) {
  try {
    init_logging(config.logging);
    auto log = component_logger("worker");

    boost::asio::io_context io(1);
    worker_runtime runtime(io, config, apps, log);
    auto deliver = [&runtime](std::string_view room, std::string_view payload, room_position at, deflated_segment pre) {
      runtime.core().deliver_room_message(room, payload, at, pre);
    };
    // With Redis the gateway hub is not used at all (no listener for link 0).
    gateway_hub_broker hub(runtime, deliver, config.publish_deflate);
    std::unique_ptr<running_broker> redis;
    if (config.redis || !config.redis_cluster.empty()) {
      redis_broker_options options;
      options.channel_prefix = config.channel_prefix;
      options.buffer = config.redis_buffer;
      options.resubscribe_wait = config.redis_resubscribe_wait;
      options.connection.liveness_timeout = config.redis_timeout;
      options.max_envelope = config.link.max_envelope;
      options.gateway_max_payload = [&runtime] { return runtime.gateway_max_payload(); };
      options.foreign = config.redis_foreign;
      options.secret = config.redis_secret;
      options.history_size = config.history_size;
      options.history_ttl = config.history_ttl;
      options.presence_ttl = config.presence_ttl;
      options.publish_deflate = config.publish_deflate;
      std::string where;
      if (config.redis) {
        redis = std::make_unique<redis_broker>(io, *config.redis, options, deliver, component_logger("redis"));
        where = fmt::format("Redis at {} (channels {}room:<R>", config.redis->describe(), config.channel_prefix);
      } else {
        redis_cluster_options cluster{config.redis_cluster, options};
        redis = std::make_unique<redis_cluster_broker>(io, std::move(cluster), deliver, component_logger("redis"));
        where =
            fmt::format("the Redis Cluster of {} seed node(s) from {} (sharded channels {}{{room:<R>}}",
                        config.redis_cluster.size(), config.redis_cluster.front().describe(), config.channel_prefix);
      }
      runtime.set_broker(*redis, nullptr);
      log->info("rooms through {}, {}, {})", where,
                config.redis_secret.empty() ? "unauthenticated" : "envelopes authenticated with the secret",
                config.history_size == 0 ? "no history"
                                         : fmt::format("history of {} messages per room for {} s", config.history_size,
                                                       config.history_ttl.count()));
    } else {
      runtime.set_broker(hub, &hub);
    }

    auto broker_report = [&] { return redis ? redis->report() : hub.report(); };
    worker_routes admin_routes(
        [&]() -> readiness {
          const std::size_t found = runtime.link_count(), up = runtime.ready_links();
          const auto b = broker_report();
          if (found == 0) return {false, "no gateway link found in " + config.link_dir};
          if (up < found) return {false, std::to_string(up) + " of " + std::to_string(found) + " gateway links up"};
          if (!b.up) return {false, std::string(b.kind) + " broker not connected"};
          return {true, std::to_string(up) + " gateway link(s), " + b.kind + " broker up"};
        },
        [&] {
          return render_worker_metrics({config.id, runtime.core().stats(), runtime.core().per_app(),
                                        runtime.core().connection_count(), runtime.ready_links(), broker_report(),
                                        runtime.link_write_waits()});
        });
    httpd::listener admin(io, admin_routes);
    start_admin(admin, config);

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      log->info("signal {}: closing the links", signo);
      admin.stop();
      runtime.stop();
      if (redis) redis->stop();
    });
    // A gateway that vanishes mid-write must not kill us with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);

    if (redis) redis->start();
    runtime.start();
    io.run();

    const auto& s = runtime.core().stats();
    log->info("exiting: {} connections, {} messages in, {} sends out, {} app errors", s.connections_opened,
              s.messages_in, s.sends_out, s.app_errors);
    if (redis) {
      redis->stop();  // counts what an outage left unsent
      const auto r = redis->report();
      log->info(
          "{} broker: published={} delivered={} buffered={} dropped={} missed={} gaps={} reconnects={} "
          "resubscribes={} duplicates={} foreign={} rejected={}",
          r.kind, r.publishes, r.deliveries, r.buffered, r.dropped, r.missed, r.gaps, r.reconnects, r.resubscribes,
          r.duplicates, r.foreign, std::accumulate(r.rejected.begin(), r.rejected.end(), std::uint64_t{0}));
    } else {
      const auto& b = hub.stats();
      log->info("hub broker: {} publishes ({} dropped), {} deliveries", b.publishes, b.publishes_dropped, b.deliveries);
    }
    return 0;
  } catch (const config_error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return config_error_exit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace fg::worker
