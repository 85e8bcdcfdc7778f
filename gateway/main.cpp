// framegate-gateway: terminates WebSocket connections and hands each
// message on (with --echo, straight back to its sender).
#include <cstdio>
#include <exception>

#include <sys/resource.h>

#include "common/logging.hpp"
#include "gateway/config.hpp"
#include "gateway/net/echo_sink.hpp"
#include "gateway/net/server.hpp"

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
    if (!config.echo) {
      log->error("no worker support in this build yet: start with --echo");
      return 2;
    }
    raise_open_file_limit();
    fg::gateway::echo_sink sink;
    fg::gateway::server server(config, sink);
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
