// framegate-worker: runs the apps behind a framegate gateway. Links to
// every gateway I/O thread found in --link-dir, on one event loop.
#include <csignal>
#include <cstdio>
#include <exception>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "common/logging.hpp"
#include "worker/apps/builtin.hpp"
#include "worker/broker/gateway_hub_broker.hpp"
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
    fg::worker::gateway_hub_broker hub(runtime, [&runtime](std::string_view room, std::string_view payload) {
      runtime.core().deliver_room_message(room, payload);
    });
    runtime.set_broker(hub, &hub);

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      log->info("signal {}: closing the links", signo);
      runtime.stop();
    });
    // A gateway that vanishes mid-write must not kill us with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);

    runtime.start();
    io.run();

    const auto& s = runtime.core().stats();
    const auto& b = hub.stats();
    log->info("exiting: {} connections, {} messages in, {} sends out, {} app errors, {} publishes ({} dropped)",
              s.connections_opened, s.messages_in, s.sends_out, s.app_errors, b.publishes, b.publishes_dropped);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate-worker: %s\n", e.what());
    return 1;
  }
}
