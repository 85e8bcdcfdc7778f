#include "gateway/routing/link_acceptor.hpp"

#include <filesystem>
#include <system_error>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

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

link_acceptor::link_acceptor(event_loop& loop, std::string socket_path, std::uint32_t max_envelope, int sndbuf,
                             link_events& events, routing_counters& counters)
    : loop_(loop),
      socket_path_(std::move(socket_path)),
      max_envelope_(max_envelope),
      sndbuf_(sndbuf, component_logger("gateway")),
      events_(events),
      counters_(counters),
      acceptor_(loop.context().get_executor()),
      backoff_(loop, socket_path_, [this] { accept_all(); }) {
  ::unlink(socket_path_.c_str());
  acceptor_.open();
  error_code ec;
  acceptor_.bind(asio::local::stream_protocol::endpoint(socket_path_), ec);
  if (ec) throw std::system_error(ec, "cannot listen for workers on " + socket_path_);
  acceptor_.listen();
  acceptor_.non_blocking(true);
  if (!loop_.poller().add(acceptor_.native_handle(), *this))
    throw std::system_error(errno, std::generic_category(), "cannot watch " + socket_path_);
}

link_acceptor::~link_acceptor() { stop(); }

bool link_acceptor::from_this_user(int fd) {
  // The directory's mode keeps other users out; this is the second lock.
  const auto uid = link::peer_uid(fd);
  if (uid && *uid == ::geteuid()) return true;
  component_logger("gateway")->warn("refused a link on {} from uid {}: workers must run as uid {}", socket_path_,
                                    uid ? std::to_string(*uid) : std::string("?"), ::geteuid());
  ::close(fd);
  return false;
}

void link_acceptor::stop() {
  if (stopped_) return;
  stopped_ = true;
  loop_.poller().remove(acceptor_.native_handle());
  error_code ec;
  acceptor_.close(ec);
  ::unlink(socket_path_.c_str());
}

void link_acceptor::on_poll(std::uint32_t events) {
  if (events & (EPOLLIN | EPOLLERR)) accept_all();
}

void link_acceptor::accept_all() {
  if (stopped_ || backoff_.resting()) return;
  // Workers connect once each, a handful per gateway: take them all.
  for (;;) {
    const int fd = ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) backoff_.rest(errno);  // out of descriptors, most likely
      return;
    }
    backoff_.accepted();
    if (!from_this_user(fd)) {
      ++counters_.links_cut[static_cast<std::size_t>(link_cutoff::foreign_user)];
      continue;
    }
    sndbuf_.apply(fd);
    std::make_shared<worker_link>(fd, loop_, events_, read_buffer_, max_envelope_, counters_)->start();
  }
}

}  // namespace fg::gateway
