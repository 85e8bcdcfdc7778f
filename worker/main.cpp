// framegate-worker: runs the apps behind a framegate gateway. Links to
// every gateway I/O thread found in --link-dir, on one event loop.
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "common/logging.hpp"
#include "worker/apps/builtin.hpp"
#include "worker/broker/gateway_hub_broker.hpp"
#include "worker/broker/redis_broker.hpp"
#include "worker/config.hpp"
#include "worker/runtime/app_registry.hpp"
#include "worker/runtime/worker_runtime.hpp"

int main(int argc, char** argv) {
  const auto config = fg::worker::parse_worker_config(argc, argv);
  try {
    fg::init_logging(config.log_level, false);
    auto log = fg::component_logger("worker");

    fg::worker::app_registry apps;
    fg::worker::mount_builtin_apps(apps, {config.apps, config.enable_test_apps, config.slow_delay});

    boost::asio::io_context io(1);
    fg::worker::worker_runtime runtime(io, config, apps, log);
    auto deliver = [&runtime](std::string_view room, std::string_view payload) {
      runtime.core().deliver_room_message(room, payload);
    };
    // With Redis the gateway hub is not used at all (no listener for link 0).
    fg::worker::gateway_hub_broker hub(runtime, deliver);
    std::unique_ptr<fg::worker::redis_broker> redis;
    if (config.redis) {
      fg::worker::redis_broker_options options;
      options.channel_prefix = config.channel_prefix;
      options.buffer = config.redis_buffer;
      options.resubscribe_wait = config.redis_resubscribe_wait;
      redis = std::make_unique<fg::worker::redis_broker>(io, *config.redis, options, deliver,
                                                         fg::component_logger("redis"));
      runtime.set_broker(*redis, nullptr);
      log->info("rooms through Redis at {} (channels {}room:<R>)", config.redis->describe(), config.channel_prefix);
    } else {
      runtime.set_broker(hub, &hub);
    }

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      log->info("signal {}: closing the links", signo);
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
      const auto r = redis->stats();
      log->info(
          "redis broker: published={} delivered={} delivered_locally={} buffered={} dropped={} missed={} "
          "reconnects={} resubscribes={} duplicates={} foreign={}",
          r.published, r.delivered, r.delivered_locally, r.buffered, r.dropped, r.missed, r.reconnects, r.resubscribes,
          r.duplicates, r.foreign);
    } else {
      const auto& b = hub.stats();
      log->info("hub broker: {} publishes ({} dropped), {} deliveries", b.publishes, b.publishes_dropped, b.deliveries);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate-worker: %s\n", e.what());
    return 1;
  }
}
