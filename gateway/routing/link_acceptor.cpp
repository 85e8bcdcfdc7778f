#include "gateway/routing/link_acceptor.hpp"

#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "common/link/link_dir_trust.hpp"
#include "common/link/link_socket.hpp"
#include "common/logging.hpp"
#include "gateway/routing/worker_link.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
using boost::system::error_code;

void link_acceptor::prepare_link_dir(const std::string& dir) {
  link::prepare_link_dir(dir);
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

bool link_acceptor::from_this_user(worker_link::socket_type& socket) {
  // The directory's mode keeps other users out; this is the second lock.
  const auto uid = link::peer_uid(socket.native_handle());
  if (uid && *uid == ::geteuid()) return true;
  component_logger("gateway")->warn("refused a link on {} from uid {}: workers must run as uid {}", socket_path_,
                                    uid ? std::to_string(*uid) : std::string("?"), ::geteuid());
  error_code ignored;
  socket.close(ignored);
  return false;
}

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
    if (!ec && !from_this_user(socket)) {
      ++counters_.links_cut[static_cast<std::size_t>(link_cutoff::foreign_user)];
    } else if (!ec) {
      std::make_shared<worker_link>(std::move(socket), events_, read_buffer_, max_envelope_, counters_)->start();
    }
    do_accept();
  });
}

}  // namespace fg::gateway
