// The admin HTTP listener: its own io_context and thread, so health checks
// and publishes never compete with the data path, and a slow admin client
// never delays a WebSocket frame. Questions about the routing state go to
// I/O thread 0 through a router_bridge.
#pragma once

#include <memory>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/admin/admin_routes.hpp"
#include "gateway/admin/router_bridge.hpp"
#include "gateway/config.hpp"

namespace fg::gateway::admin {

class admin_server {
 public:
  // `router` and `home_io` are I/O thread 0's (null in echo mode); they
  // must outlive stop().
  admin_server(const gateway_config& config, boost::asio::io_context* home_io, worker_router* router);
  ~admin_server();
  admin_server(const admin_server&) = delete;
  admin_server& operator=(const admin_server&) = delete;

  // Binds config.admin and starts the thread; logs "admin listening on
  // HOST:PORT". Throws std::system_error when the address cannot be bound.
  void start();
  // Closes every admin connection and joins the thread. Idempotent.
  void stop();

  [[nodiscard]] unsigned short port() const noexcept { return port_; }

 private:
  void do_accept();

  const gateway_config& config_;
  boost::asio::io_context io_{1};  // declared before everything that uses it, so destroyed after
  router_bridge bridge_;
  admin_routes routes_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::thread thread_;
  unsigned short port_ = 0;
};

}  // namespace fg::gateway::admin
