// framegate-gateway: terminates WebSocket connections and hands each
// message on (with --echo, straight back to its sender).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <system_error>
#include <vector>

#include <sys/resource.h>

#include "common/config_error.hpp"
#include "common/logging.hpp"
#include "gateway/admin/admin_server.hpp"
#include "gateway/config.hpp"
#include "gateway/net/echo_sink.hpp"
#include "gateway/net/send_batch.hpp"
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

// The admin listener, after the WebSocket listener so that its "admin
// listening on" line never comes first. At the default address a bind
// failure only warns (another gateway on this machine may hold it); an
// address the operator chose must be honoured or the start fails, as a
// configuration error (a supervisor does not restart it).
void start_admin(std::optional<fg::gateway::admin::admin_server>& admin, const fg::gateway::gateway_config& config,
                 fg::gateway::server& server, fg::gateway::worker_router* router) {
  std::vector<fg::gateway::io_thread*> threads;
  for (const auto& t : server.threads()) threads.push_back(t.get());
  admin.emplace(config, std::move(threads), router);
  try {
    admin->start();
  } catch (const std::system_error& e) {
    if (config.admin_explicit) throw fg::config_error(std::string(e.what()) + " (choose another --admin, or off)");
    fg::component_logger("gateway")->warn("{}: admin listener disabled (set --admin)", e.what());
    admin.reset();
  }
}

// Every thread's batch is set up alike: thread 0's says for all.
void log_client_writes(const fg::gateway::gateway_config& config, const fg::gateway::send_batch& batch) {
  auto log = fg::component_logger("gateway");
  if (batch.uses_ring()) {
    log->info("client writes: io_uring, up to {} sockets per system call", fg::gateway::send_batch::kCapacity);
  } else if (config.io_uring == fg::gateway::io_uring_mode::off) {
    log->info("client writes: one send() each (--io-uring off)");
  } else {
    log->warn("{}: client writes are one send() each", batch.ring_problem());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto config = fg::gateway::parse_gateway_config(argc, argv);
  try {
    fg::init_logging(config.logging);
    auto log = fg::component_logger("gateway");
    raise_open_file_limit();
    // Writing to a log pipe whose reader is gone (a SIGKILLed supervisor) must
    // fail with EPIPE, not kill the gateway before it drains and cleans up.
    std::signal(SIGPIPE, SIG_IGN);
    if (!config.echo) fg::gateway::link_acceptor::prepare_link_dir(config.link_dir);
    fg::gateway::worker_router* router0 = nullptr;  // thread 0's: the admin listener asks it
    fg::gateway::server server(config, [&](fg::gateway::io_thread& t) -> std::unique_ptr<fg::gateway::message_sink> {
      if (config.echo) return std::make_unique<fg::gateway::echo_sink>();
      auto router = std::make_unique<fg::gateway::worker_router>(t);
      if (t.index() == 0) router0 = router.get();
      return router;
    });
    if (config.deflate().enabled) log->info("{}", fg::gateway::describe_deflate(config.deflate()));
    log_client_writes(config, server.threads().front()->client_writes());
    if (!config.echo) log->info("waiting for workers on {}/link-*.sock", config.link_dir);
    try {
      server.start();
    } catch (const std::system_error& e) {
      // Without its client listener the gateway is of no use, and retrying
      // cannot help: a configuration error. Exit at once: I/O threads that
      // never ran do not shut down in order (their destructors would wait
      // forever), and the link sockets left behind are removed at the next
      // start as stale.
      std::fprintf(stderr, "framegate-gateway: %s (choose another --listen)\n", e.what());
      std::fflush(nullptr);
      std::_Exit(fg::config_error_exit);
    }
    // Declared after the server, so stopped and destroyed before thread 0's
    // router it asks questions of.
    std::optional<fg::gateway::admin::admin_server> admin;
    if (config.admin) start_admin(admin, config, server, router0);
    server.run_until_signal();
    if (admin) admin->stop();
    const auto t = server.totals();
    log->info("stopped: {} connections, {} messages in, {} out, {} handshakes refused, {} protocol errors",
              t.connections_opened, t.messages_in, t.messages_out, t.handshakes_refused, t.protocol_errors);
    if (config.deflate().enabled)
      log->info(
          "permessage-deflate: {} connections, {} messages inflated ({} -> {} bytes), {} compressed ({} -> {} "
          "bytes), {} sent plain",
          t.deflate_connections_opened, t.deflate_messages_in, t.deflate_bytes_in_compressed,
          t.deflate_bytes_in_uncompressed, t.deflate_messages_out, t.deflate_bytes_out_uncompressed,
          t.deflate_bytes_out_compressed, t.deflate_skipped);
    return 0;
  } catch (const fg::config_error& e) {
    std::fprintf(stderr, "framegate-gateway: %s\n", e.what());
    return fg::config_error_exit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "framegate-gateway: %s\n", e.what());
    return 1;
  }
}
