#include "gateway/admin/admin_server.hpp"

#include <system_error>

#include "common/logging.hpp"
#include "gateway/admin/admin_session.hpp"

namespace fg::gateway::admin {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

admin_server::admin_server(const gateway_config& config, asio::io_context* home_io, worker_router* router)
    : config_(config),
      bridge_(io_, home_io, router),
      routes_({config.api_token, config.reader.limits.max_message_size}, bridge_),
      acceptor_(io_),
      accept_retry_(io_) {}

admin_server::~admin_server() { stop(); }

void admin_server::start() {
  const auto& where = *config_.admin;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(where.host, ec);
  if (ec) throw std::system_error(ec, "invalid admin address '" + where.host + "'");
  const tcp::endpoint endpoint(address, where.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint, ec);
  if (ec) {
    acceptor_.close();
    throw std::system_error(ec, "cannot listen for admin requests on " + where.host + ":" + std::to_string(where.port));
  }
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  do_accept();
  thread_ = std::thread([this] { io_.run(); });
  auto log = component_logger("gateway");
  log->log(readiness_level(*log), "admin listening on {}:{}", where.host, port_);
}

void admin_server::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void admin_server::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, most likely: back off instead of spinning on accept.
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](boost::system::error_code wec) {
        if (!wec) do_accept();
      });
      return;
    }
    std::make_shared<admin_session>(boost::beast::tcp_stream(std::move(socket)), routes_)->start();
    do_accept();
  });
}

}  // namespace fg::gateway::admin
