#include "gateway/admin/admin_server.hpp"

#include "common/logging.hpp"
#include "gateway/net/io_thread.hpp"

namespace fg::gateway::admin {

admin_server::admin_server(const gateway_config& config, std::vector<io_thread*> threads, route_table* router)
    : config_(config),
      bridge_(io_, threads, router),
      routes_({config.api_token, config.reader.limits.max_message_size, threads.front()->shared().gateway_id}, bridge_),
      listener_(io_, routes_) {}

admin_server::~admin_server() { stop(); }

void admin_server::start() {
  listener_.start(*config_.admin);
  thread_ = std::thread([this] { io_.run(); });
  auto log = component_logger("gateway");
  log->log(readiness_level(*log), "admin listening on {}:{}", config_.admin->host, listener_.port());
}

void admin_server::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fg::gateway::admin
