#include "gateway/routing/link_acceptor.hpp"

#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "common/link/link_socket.hpp"
#include "gateway/routing/worker_link.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
using boost::system::error_code;

void link_acceptor::prepare_link_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::system_error(ec, "cannot create link directory " + dir);
  link::remove_link_sockets(dir);
}

link_acceptor::link_acceptor(asio::io_context& io, std::string socket_path, std::uint32_t max_envelope,
                             link_events& events, routing_counters& counters)
    : socket_path_(std::move(socket_path)),
      max_envelope_(max_envelope),
      events_(events),
      counters_(counters),
      acceptor_(io.get_executor()) {
  ::unlink(socket_path_.c_str());
  acceptor_.open();
  error_code ec;
  acceptor_.bind(asio::local::stream_protocol::endpoint(socket_path_), ec);
  if (ec) throw std::system_error(ec, "cannot listen for workers on " + socket_path_);
  acceptor_.listen();
  do_accept();
}

link_acceptor::~link_acceptor() { stop(); }

void link_acceptor::stop() {
  if (stopped_) return;
  stopped_ = true;
  error_code ec;
  acceptor_.close(ec);
  ::unlink(socket_path_.c_str());
}

void link_acceptor::do_accept() {
  acceptor_.async_accept([this](error_code ec, worker_link::socket_type socket) {
    if (ec == asio::error::operation_aborted || stopped_) return;
    if (!ec) {
      std::make_shared<worker_link>(std::move(socket), events_, read_buffer_, max_envelope_, counters_)->start();
    }
    do_accept();
  });
}

}  // namespace fg::gateway
