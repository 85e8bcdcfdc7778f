// Accepts admin HTTP connections on an event loop it is given, and runs a
// session per connection against one service. The gateway runs it on a
// thread of its own (admin traffic never competes with frames); a worker
// runs it on its one loop (a worker too busy to answer is unhealthy).
#pragma once

#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/endpoint.hpp"
#include "common/httpd/service.hpp"

namespace fg::httpd {

class session;

class listener {
 public:
  // `routes` must outlive the listener.
  listener(boost::asio::io_context& io, service& routes);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  // Binds `where` (port 0: any free port) and starts accepting. Throws
  // std::system_error naming the address when it cannot be bound.
  void start(const host_port& where);
  // Stops accepting and closes every open session. Idempotent.
  void stop();

  [[nodiscard]] unsigned short port() const noexcept { return port_; }

 private:
  void do_accept();

  service& routes_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::vector<std::weak_ptr<session>> sessions_;
  unsigned short port_ = 0;
  bool stopped_ = false;
};

}  // namespace fg::httpd
