#include "gateway/net/server.hpp"

#include <atomic>
#include <random>

#include <boost/asio/detail/socket_option.hpp>
#include <boost/asio/io_context.hpp>

#include "common/logging.hpp"
#include "gateway/net/gateway_id.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

server::server(const gateway_config& config, sink_factory make_sink) : shared_{config, std::move(make_sink), {}} {
  std::random_device entropy;
  shared_.gateway_id = make_gateway_id((std::uint64_t{entropy()} << 32) | entropy());
  if (config.max_connections_per_ip != 0 || config.handshake_rate > 0) {
    per_ip_options o;
    o.max_connections = config.max_connections_per_ip;
    o.handshake_rate = config.handshake_rate;
    o.handshake_burst = config.handshake_burst;
    shared_.per_ip = std::make_unique<per_ip_limits>(o, (std::uint64_t{entropy()} << 32) | entropy());
  }
  for (unsigned i = 0; i < config.threads; ++i) threads_.push_back(std::make_unique<io_thread>(shared_, i));
  if (config.jwt_keys) reload_signal_ = std::make_unique<asio::signal_set>(signals_io_, SIGHUP);
}

server::~server() {
  request_shutdown();
  join();
}

void server::start() {
  const auto& cfg = shared_.config;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(cfg.listen.host, ec);
  if (ec) throw std::system_error(ec, "invalid listen address '" + cfg.listen.host + "'");
  tcp::endpoint endpoint(address, cfg.listen.port);

  std::vector<io_thread::acceptor_type> acceptors;
  for (auto& t : threads_) {
    io_thread::acceptor_type acceptor(t->context().get_executor());
    acceptor.open(endpoint.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.set_option(reuse_port(true));
    acceptor.bind(endpoint, ec);
    if (ec) throw std::system_error(ec, "cannot listen on " + cfg.listen.host + ":" + std::to_string(endpoint.port()));
    acceptor.listen(asio::socket_base::max_listen_connections);
    endpoint.port(acceptor.local_endpoint().port());  // the others join the port the first one got
    acceptors.push_back(std::move(acceptor));
  }
  port_ = endpoint.port();
  for (std::size_t i = 0; i < threads_.size(); ++i) threads_[i]->start(std::move(acceptors[i]));
  auto log = component_logger("gateway");
  log->log(readiness_level(*log), "listening on {}:{} with {} thread(s){}", cfg.listen.host, port_, threads_.size(),
           cfg.echo ? " in echo mode" : "");
}

void server::run_until_signal() {
  signals_.async_wait([this](boost::system::error_code ec, int signo) {
    if (ec) return;
    component_logger("gateway")->info("signal {}: closing connections (1001)", signo);
    if (reload_signal_) reload_signal_->cancel();
    request_shutdown();
  });
  if (reload_signal_) wait_for_reload();
  signals_io_.run();
  join();
}

void server::wait_for_reload() {
  reload_signal_->async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    reload_keys();
    wait_for_reload();
  });
}

bool server::reload_keys() {
  auto log = component_logger("gateway");
  std::shared_ptr<const auth::key_set> keys;
  try {
    keys = auth::load_keys(shared_.config.jwt_sources);
  } catch (const std::exception& e) {
    log->error("SIGHUP: token keys not reloaded, the previous ones stay in use: {}", e.what());
  }
  // "Reloaded" is said once every I/O thread uses the new keys: a handshake
  // after the line is judged by them (the last thread to switch says it).
  auto left = std::make_shared<std::atomic<std::size_t>>(threads_.size());
  const std::size_t count = keys ? keys->keys().size() : 0;
  for (auto& t : threads_)
    t->keys_reloaded(keys, [left, log, count, ok = keys != nullptr] {
      if (left->fetch_sub(1) == 1 && ok) log->info("SIGHUP: token keys reloaded ({} key(s))", count);
    });
  return keys != nullptr;
}

void server::request_shutdown() {
  for (auto& t : threads_) t->request_shutdown();
}

void server::join() {
  for (auto& t : threads_) t->join();
}

thread_counters server::totals() const {
  // After join(): the threads are gone, their counters are stable.
  thread_counters sum;
  for (const auto& t : threads_) sum.add(t->counters());
  return sum;
}

}  // namespace fg::gateway
