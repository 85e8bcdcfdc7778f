// framegate-gateway: terminates WebSocket connections and hands each
// message on (with --echo, straight back to its sender).
#include <cstdio>
#include <exception>

#include <sys/resource.h>

#include "common/logging.hpp"
#include "gateway/config.hpp"
#include "gateway/net/echo_sink.hpp"
#include "gateway/net/server.hpp"
#include "gateway/routing/worker_router.hpp"

namespace {

// Idle connections cost a descriptor each: use all the process may have.
void raise_open_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto config = fg::gateway::parse_gateway_config(argc, argv);
  try {
    fg::init_logging(config.log_level, false);
    auto log = fg::component_logger("gateway");
    raise_open_file_limit();
    if (!config.echo) fg::gateway::worker_router::prepare_link_dir(config.link_dir);
    fg::gateway::server server(config, [&](fg::gateway::io_thread& t) -> std::unique_ptr<fg::gateway::message_sink> {
      if (config.echo) return std::make_unique<fg::gateway::echo_sink>();
      return std::make_unique<fg::gateway::worker_router>(t);
    });
    if (!config.echo) log->info("waiting for workers on {}/link-*.sock", config.link_dir);
    server.start();
    server.run_until_signal();
    const auto t = server.totals();
    log->info("stopped: {} connections, {} messages in, {} out, {} handshakes refused, {} protocol errors",
              t.connections_opened, t.messages_in, t.messages_out, t.handshakes_refused, t.protocol_errors);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate-gateway: %s\n", e.what());
    return 1;
  }
}
