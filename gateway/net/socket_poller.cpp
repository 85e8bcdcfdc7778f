#include "gateway/net/socket_poller.hpp"

#include <sys/epoll.h>

#include <array>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace fg::gateway {

namespace {
int make_epoll_set() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
  return fd;
}
}  // namespace

socket_poller::socket_poller(boost::asio::io_context& io) : set_(io.get_executor(), make_epoll_set()) {}

socket_poller::~socket_poller() = default;  // set_ closes the epoll descriptor

void socket_poller::start() { arm(); }

bool socket_poller::add(int fd, poll_target& target) noexcept {
  if (fd < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (::epoll_ctl(set_.native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  const auto slot = static_cast<std::size_t>(fd);
  if (slot >= targets_.size()) targets_.resize(slot + 1, nullptr);
  targets_[slot] = &target;
  ++watched_;
  return true;
}

void socket_poller::remove(int fd) noexcept {
  const auto slot = static_cast<std::size_t>(fd);
  if (fd < 0 || slot >= targets_.size() || targets_[slot] == nullptr) return;
  targets_[slot] = nullptr;
  --watched_;
  epoll_event ev{};  // ignored, but kernels before 2.6.9 wanted one
  ::epoll_ctl(set_.native_handle(), EPOLL_CTL_DEL, fd, &ev);
}

void socket_poller::stop() noexcept {
  stopped_ = true;
  boost::system::error_code ignored;
  set_.cancel(ignored);
}

void socket_poller::arm() {
  if (stopped_) return;
  set_.async_wait(decltype(set_)::wait_read, [this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    deliver();
    arm();
  });
}

void socket_poller::deliver() {
  // One batch per turn: with more ready than this, the set stays readable
  // and the next turn takes the rest, after the loop's other handlers.
  std::array<epoll_event, 256> ready;
  const int n = ::epoll_wait(set_.native_handle(), ready.data(), static_cast<int>(ready.size()), 0);
  for (int i = 0; i < n; ++i) {
    const auto slot = static_cast<std::size_t>(ready[static_cast<std::size_t>(i)].data.fd);
    // A target may remove others (or itself) while handling its edge.
    if (slot < targets_.size() && targets_[slot] != nullptr)
      targets_[slot]->on_poll(ready[static_cast<std::size_t>(i)].events);
  }
}

}  // namespace fg::gateway
