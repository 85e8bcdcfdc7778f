#include "common/httpd/listener.hpp"

#include <algorithm>
#include <string>
#include <system_error>

#include "common/httpd/session.hpp"

namespace fg::httpd {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

listener::listener(asio::io_context& io, service& routes) : routes_(routes), acceptor_(io), accept_retry_(io) {}

listener::~listener() { stop(); }

void listener::start(const host_port& where) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(where.host, ec);
  if (ec) throw std::system_error(ec, "invalid admin address '" + where.host + "'");
  const tcp::endpoint endpoint(address, where.port);
  const auto fail = [&](const char* step) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    throw std::system_error(ec, std::string("cannot listen for admin requests on ") + where.host + ":" +
                                    std::to_string(where.port) + " (" + step + ")");
  };
  // Every step reports through one exception type: two processes may both
  // bind with SO_REUSEADDR and only the second listen() fails.
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) fail("socket");
  acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (ec) fail("SO_REUSEADDR");
  acceptor_.bind(endpoint, ec);
  if (ec) fail("bind");
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail("listen");
  port_ = acceptor_.local_endpoint().port();
  do_accept();
}

void listener::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  for (const auto& w : sessions_)
    if (const auto s = w.lock()) s->stop();
  sessions_.clear();
}

void listener::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || stopped_) return;
    if (ec) {
      // Out of descriptors, most likely: back off instead of spinning on accept.
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](boost::system::error_code wec) {
        if (!wec) do_accept();
      });
      return;
    }
    std::erase_if(sessions_, [](const std::weak_ptr<session>& w) { return w.expired(); });
    auto s = std::make_shared<session>(boost::beast::tcp_stream(std::move(socket)), routes_);
    sessions_.push_back(s);
    s->start();
    do_accept();
  });
}

}  // namespace fg::httpd
