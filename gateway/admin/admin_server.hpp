// The gateway's admin HTTP listener: its own io_context and thread, so
// health checks, scrapes and publishes never compete with the data path,
// and a slow admin client never delays a WebSocket frame. Questions about
// the I/O threads' state go to them through a router_bridge.
#pragma once

#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/httpd/listener.hpp"
#include "gateway/admin/admin_routes.hpp"
#include "gateway/admin/router_bridge.hpp"
#include "gateway/config.hpp"

namespace fg::gateway::admin {

class admin_server {
 public:
  // `router` is I/O thread 0's (null in echo mode); it and the threads
  // must outlive stop().
  admin_server(const gateway_config& config, std::vector<io_thread*> threads, route_table* router);
  ~admin_server();
  admin_server(const admin_server&) = delete;
  admin_server& operator=(const admin_server&) = delete;

  // Binds config.admin and starts the thread; logs "admin listening on
  // HOST:PORT". Throws std::system_error when the address cannot be bound.
  void start();
  // Closes every admin connection and joins the thread. Idempotent.
  void stop();

  [[nodiscard]] unsigned short port() const noexcept { return listener_.port(); }

 private:
  const gateway_config& config_;
  boost::asio::io_context io_{1};  // declared before everything that uses it, so destroyed after
  router_bridge bridge_;
  admin_routes routes_;
  httpd::listener listener_;
  std::thread thread_;
};

}  // namespace fg::gateway::admin
